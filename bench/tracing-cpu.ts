/**
 * `node --import tsx bench/tracing-cpu.ts [notifications] [rounds] [sdk,encoder,herald]`: the CPU tracing takes a
 * notification, alone, in one process: a notification's spans as Herald makes them (the server
 * span with its commit event, `process` with its link, `render`, `send`), exported over
 * OTLP/protobuf to a sink in another process: the SDK's spans through its batch processor and
 * exporter with the attributes passed to `startSpan` (`sdk`); the SDK's spans through Herald's
 * processor (src/tracing/exporter.ts), attributes set after the start (`encoder`, decision 0052);
 * Herald's spans (src/tracing/span.ts) through Herald's processor (`herald`, decision 0056). In
 * turn, `rounds` times. Paced at 3,000 notifications a second in ticks of 100, so batches wait for
 * their export as in the scenario. CPU is user and system of every thread of this process (not
 * the sink's), per notification, after a warm-up of a third as many.
 */
import { spawn } from 'node:child_process';
import {
  type Attributes,
  SpanKind as Kind,
  type Link,
  ROOT_CONTEXT,
  type SpanKind,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { protobufSpanProcessor } from '../src/tracing/exporter.ts';
import type { EncodingSpanProcessor } from '../src/tracing/processor.ts';
import { heraldTracerOf } from '../src/tracing/span.ts';

const [count = 60_000, rounds = 2] = process.argv.slice(2, 4).map(Number);
/** The ways to measure, comma-separated (all three unless named). */
const ways = (process.argv[4]?.split(',') ?? ['sdk', 'encoder', 'herald']) as Way[];

/** An OTLP/HTTP endpoint in a child process that reads each export and answers 200. */
const SINK = `const s = require('node:http').createServer((q, r) => { q.resume(); q.on('end', () => r.end()); });
s.listen(0, '127.0.0.1', () => process.send(s.address().port));`;

type Way = 'sdk' | 'encoder' | 'herald';

async function measure(way: Way, port: number): Promise<number> {
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${port}`;
  process.env.OTEL_BSP_MAX_QUEUE_SIZE = '65536';
  const processor: SpanProcessor =
    way === 'sdk' ? new BatchSpanProcessor(new OTLPTraceExporter()) : protobufSpanProcessor();
  const provider = new BasicTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': 'herald' })),
    spanProcessors: [processor],
  });
  const sdkTracer = provider.getTracer('herald', '0.1.0');
  const tracer = way === 'herald' ? heraldTracerOf(sdkTracer, processor as EncodingSpanProcessor) : sdkTracer;
  const start = (
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    parent = ROOT_CONTEXT,
    links?: Link[],
  ) => {
    if (way === 'sdk') return tracer.startSpan(name, { kind, attributes, links }, parent);
    const span = tracer.startSpan(name, { kind, links }, parent);
    span.setAttributes(attributes);
    return span;
  };
  const one = (i: number) => {
    const server = start('POST /notifications', Kind.SERVER, {
      'http.request.method': 'POST',
      'url.path': '/notifications',
      'url.scheme': 'http',
      'http.route': '/notifications',
      'network.protocol.version': '1.1',
      'server.port': 8080,
    });
    server.addEvent('commit', { 'herald.notifications': 1, 'herald.wait_ms': 3.25 });
    server.setAttribute('http.response.status_code', 202);
    server.end();
    const accepted = { ...server.spanContext(), isRemote: true };
    const processing = start(
      'process email',
      Kind.CONSUMER,
      {
        'messaging.system': 'herald',
        'messaging.operation.type': 'process',
        'messaging.operation.name': 'process',
        'messaging.destination.name': 'email',
        'messaging.message.id': `01JDXYZABCDEF0123${String(i).padStart(9, '0')}`,
        'herald.tenant': 'default',
        'herald.priority': 'NORMAL',
        'herald.attempt': 1,
      },
      trace.setSpanContext(ROOT_CONTEXT, accepted),
      [{ context: accepted }],
    );
    const parent = trace.setSpan(ROOT_CONTEXT, processing);
    const attempt = { 'herald.channel': 'email', 'herald.attempt': 1 };
    start('render', Kind.INTERNAL, { 'herald.template.key': 'welcome', 'herald.locale': 'en' }, parent).end();
    const send = start('send sandbox', Kind.CLIENT, { 'herald.provider': 'sandbox', ...attempt }, parent);
    send.setAttribute('herald.outcome', 'sent');
    send.end();
    processing.setAttribute('herald.outcome', 'sent');
    processing.end();
  };
  const load = async (total: number) => {
    for (let done = 0; done < total; done += 100) {
      for (let k = 0; k < 100; k++) one(done + k);
      await new Promise((resolve) => setTimeout(resolve, 33));
    }
    await processor.forceFlush();
  };
  await load(Math.round(count / 3));
  const before = process.cpuUsage();
  await load(count);
  const used = process.cpuUsage(before);
  await provider.shutdown();
  return (used.user + used.system) / count;
}

const sink = spawn(process.execPath, ['-e', SINK], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const port = await new Promise<number>((resolve) => sink.once('message', (m) => resolve(m as number)));
try {
  for (let i = 1; i <= rounds; i++) {
    for (const way of ways) {
      console.log(`round ${i}: ${way} ${(await measure(way, port)).toFixed(1)} µs a notification`);
    }
  }
} finally {
  sink.kill();
}
