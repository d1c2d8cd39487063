// Herald's OTLP/protobuf encoder (src/tracing/otlp-protobuf.ts) against the SDK's own serializer:
// real SDK spans (every attribute type, events, links, trace states, a remote parent, an error
// status, dropped attributes, events and links, a resource and a scope with schema URLs) are
// written by both and each message is decoded twice, by the message types generated from
// opentelemetry-proto and by a wire reader written here that knows every field of today's
// trace.proto (the generated types predate the span and link `flags`); the two must decode to
// the same message, field by field. A batch of two scopes is left to the SDK's serializer.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import otlpProto from '@opentelemetry/otlp-proto-exporter-base/build/src/generated/root.js';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  type IdGenerator,
  InMemorySpanExporter,
  ParentBasedSampler,
  type ReadableSpan,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { protobufSpanProcessor } from '../../src/tracing/exporter.ts';
import { type EncodableSpan, encodeSpan, traceRequest } from '../../src/tracing/otlp-protobuf.ts';
import { HeraldTracer, heraldTracerOf } from '../../src/tracing/span.ts';
import { startOtlpReceiver } from '../helpers/peers/otlp.ts';

/** What the span processor sends for spans of one resource and scope: each encoded as it ends. */
const encodeTraceRequest = (spans: EncodableSpan[]) =>
  traceRequest(
    spans[0] as EncodableSpan,
    Buffer.concat(spans.map((span) => Uint8Array.from(encodeSpan(span)))),
  );

/**
 * Ids counted from 1, the same sequence for each provider made with one; each ends in a scramble
 * of its count, which a ratio sampler reads as a random trace id's end.
 */
function countedIds(): IdGenerator {
  let n = 0;
  const next = (digits: number) => {
    n++;
    const scrambled = (Math.imul(n, 0x9e3779b1) >>> 0).toString(16).padStart(8, '0');
    return n.toString(16).padStart(digits - 8, '0') + scrambled;
  };
  return { generateTraceId: () => next(32), generateSpanId: () => next(16) };
}

/**
 * Finished spans of one tracer: every kind of field the exporter may meet, made by the SDK's
 * spans or by Herald's (src/tracing/span.ts) with the same provider configuration.
 */
function madeSpans(made: 'sdk' | 'herald' = 'sdk'): {
  spans: EncodableSpan[];
  provider: BasicTracerProvider;
} {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    idGenerator: countedIds(),
    resource: resourceFromAttributes(
      { 'service.name': 'herald', 'service.instance.id': 'é-1', 'host.cpus': 2, 'deployment.test': true },
      { schemaUrl: 'https://opentelemetry.io/schemas/1.26.0' },
    ),
    spanLimits: {
      attributeCountLimit: 600,
      eventCountLimit: 3,
      linkCountLimit: 2,
      attributePerEventCountLimit: 3,
      attributePerLinkCountLimit: 2,
    },
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const sdkTracer = provider.getTracer('herald', '1.2.3', {
    schemaUrl: 'https://opentelemetry.io/schemas/1.24.0',
  });
  const ended: EncodableSpan[] = [];
  const tracer =
    made === 'sdk' ? sdkTracer : heraldTracerOf(sdkTracer, { onEnd: (span) => ended.push(span) });
  assert.equal(tracer instanceof HeraldTracer, made === 'herald');
  const remote = {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
    traceState: new TraceState('vendor=a1,other=b-2'),
  };
  const server = tracer.startSpan(
    'POST /notifications',
    {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': 'POST',
        'url.path': `/notifications/${'x'.repeat(300)}`,
        'herald.text': 'café ✓ 通知',
        'herald.int': 42,
        'herald.negative': -7,
        'herald.big': 2 ** 40,
        'herald.huge': 2 ** 60,
        'herald.double': 1.5,
        'herald.nan': Number.NaN,
        'herald.true': true,
        'herald.false': false,
        'herald.strings': ['a', 'é', ''],
        'herald.numbers': [1, -2, 2.5],
        'herald.booleans': [true, false],
      },
    },
    trace.setSpanContext(ROOT_CONTEXT, remote),
  );
  server.addEvent('commit', { 'herald.notifications': 3, 'herald.wait_ms': 0.731 });
  server.addEvent('explicit', { a: 1, b: 2, c: 3, d: 4 }, [1_900_000_000, 999_999_999]);
  server.setStatus({ code: SpanStatusCode.ERROR, message: 'failed: ✗' });
  server.end();
  const parent = trace.setSpan(ROOT_CONTEXT, server);
  const consumer = tracer.startSpan(
    'process email',
    {
      kind: SpanKind.CONSUMER,
      links: [
        { context: remote, attributes: { 'link.one': 'x', 'link.two': 2, 'link.three': true } },
        { context: { ...remote, spanId: 'aaaaaaaaaaaaaaaa', isRemote: false, traceState: undefined } },
        { context: { ...remote, spanId: 'bbbbbbbbbbbbbbbb', traceFlags: TraceFlags.NONE } },
      ],
      startTime: [2 ** 32 + 5, 123],
    },
    parent,
  );
  for (let i = 0; i < 5; i++) consumer.addEvent(`event ${i}`);
  consumer.setStatus({ code: SpanStatusCode.OK });
  consumer.end([2 ** 32 + 6, 999_999_999]);
  const wide = tracer.startSpan('render', {}, trace.setSpan(ROOT_CONTEXT, consumer));
  for (let i = 0; i < 700; i++) wide.setAttribute(`herald.attribute.${i}`, `value ${i}`);
  wide.end();
  const short = tracer.startSpan('s', { kind: SpanKind.CLIENT }, parent);
  short.updateName('short');
  short.recordException({
    name: 'Error',
    code: 'E_REFUSED',
    message: 'refused',
    stack: 'Error: refused\n    at here',
  });
  short.end();
  // What an ended span is asked is ignored.
  short.setAttribute('herald.late', 1);
  short.addEvent('late');
  short.setStatus({ code: SpanStatusCode.ERROR });
  short.end();
  return { spans: made === 'sdk' ? exporter.getFinishedSpans() : ended, provider };
}

/** The generated message type (its .d.ts types the module only as a protobufjs Root). */
interface MessageType {
  decode(bytes: Uint8Array): object;
  toObject(message: object, options: object): unknown;
}
const ExportTraceServiceRequest = (
  otlpProto as unknown as {
    opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: MessageType } } } } };
  }
).opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

const generated = (bytes: Uint8Array) =>
  ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(bytes), {
    longs: String,
    enums: Number,
    bytes: String,
    defaults: true,
    arrays: true,
  });

/**
 * The message fields of each OTLP message (opentelemetry/proto/trace/v1/trace.proto,
 * common/v1/common.proto, resource/v1/resource.proto, collector/trace/v1/trace_service.proto);
 * every other field is a scalar, read by its wire type.
 */
const MESSAGES: Record<string, Record<number, string>> = {
  ExportTraceServiceRequest: { 1: 'ResourceSpans' },
  ResourceSpans: { 1: 'Resource', 2: 'ScopeSpans' },
  Resource: { 1: 'KeyValue' },
  ScopeSpans: { 1: 'InstrumentationScope', 2: 'Span' },
  InstrumentationScope: { 3: 'KeyValue' },
  Span: { 9: 'KeyValue', 11: 'Event', 13: 'Link', 15: 'Status' },
  Event: { 3: 'KeyValue' },
  Link: { 4: 'KeyValue' },
  Status: {},
  KeyValue: { 2: 'AnyValue' },
  AnyValue: { 5: 'ArrayValue', 6: 'KeyValueList' },
  ArrayValue: { 1: 'AnyValue' },
  KeyValueList: { 1: 'KeyValue' },
};

type Wire = Record<number, unknown[]>;

/** Reads `bytes` as message `type`: each field number with its values in order (bytes as hex). */
function wire(bytes: Uint8Array, type: string): Wire {
  const fields = MESSAGES[type] ?? {};
  const out: Wire = {};
  let at = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      const b = bytes[at++] as number;
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return v;
      shift += 7n;
    }
  };
  while (at < bytes.length) {
    const key = Number(varint());
    const field = key >>> 3;
    let value: unknown;
    switch (key & 7) {
      case 0:
        value = `varint ${varint()}`;
        break;
      case 1:
        value = `fixed64 ${Buffer.from(bytes.subarray(at, at + 8)).readBigUInt64LE()}`;
        at += 8;
        break;
      case 5:
        value = `fixed32 ${Buffer.from(bytes.subarray(at, at + 4)).readUInt32LE()}`;
        at += 4;
        break;
      case 2: {
        const length = Number(varint());
        const body = bytes.subarray(at, at + length);
        at += length;
        const inner = fields[field];
        value = inner === undefined ? `bytes ${Buffer.from(body).toString('hex')}` : wire(body, inner);
        break;
      }
      default:
        throw new Error(`wire type ${key & 7} of field ${field} in ${type}`);
    }
    out[field] = [...(out[field] ?? []), value];
  }
  return out;
}

const decoded = (bytes: Uint8Array) => wire(bytes, 'ExportTraceServiceRequest');

/** The times of each span and event that were taken from the clock, in place of their values. */
function clockTimesBlanked(request: Wire, explicit: Set<string>): Wire {
  const blank = (values: unknown[] | undefined) =>
    values?.map((v) => (explicit.has(String(v)) ? v : 'a time of the clock'));
  const resourceSpans = (request[1] as Wire[])[0] as Wire;
  for (const scopeSpans of resourceSpans[2] as Wire[])
    for (const span of scopeSpans[2] as Wire[]) {
      span[7] = blank(span[7]) as unknown[];
      span[8] = blank(span[8]) as unknown[];
      for (const event of (span[11] ?? []) as Wire[]) event[1] = blank(event[1]) as unknown[];
    }
  return request;
}

/** An HrTime as the wire reader shows a fixed64 of nanoseconds. */
const fixed64 = ([seconds, nanos]: [number, number]) =>
  `fixed64 ${BigInt(seconds) * 1_000_000_000n + BigInt(nanos)}`;

describe('Herald’s spans (src/tracing/span.ts) record what the SDK’s record', () => {
  it('encodes to the same message as the SDK’s spans made alike, but for the times read from the clock', async () => {
    const sdk = madeSpans('sdk');
    const herald = madeSpans('herald');
    assert.equal(herald.spans.length, 4);
    // The times the spans were given, which must arrive as given.
    const explicit = new Set(
      [
        [2 ** 32 + 5, 123],
        [2 ** 32 + 6, 999_999_999],
        [1_900_000_000, 999_999_999],
      ].map((t) => fixed64(t as [number, number])),
    );
    const ours = decoded(encodeTraceRequest(herald.spans));
    const theirs = decoded(encodeTraceRequest(sdk.spans));
    const consumerOf = (request: Wire) =>
      ((((request[1] as Wire[])[0] as Wire)[2] as Wire[])[0] as Wire)[2]?.[1] as Wire;
    assert.deepEqual(
      [consumerOf(ours)[7], consumerOf(ours)[8]],
      [[fixed64([2 ** 32 + 5, 123])], [fixed64([2 ** 32 + 6, 999_999_999])]],
    );
    assert.deepEqual(clockTimesBlanked(ours, explicit), clockTimesBlanked(theirs, explicit));
    // Every span of the clock ends at or after its start, within this test's time.
    for (const span of herald.spans) {
      const [start, end] = [span.startTime, span.endTime].map(([s, n]) => s * 1e3 + n / 1e6);
      assert.ok((end as number) >= (start as number), span.name);
    }
    const server = herald.spans[0] as EncodableSpan;
    const [s, n] = server.startTime;
    assert.ok(Math.abs(s * 1e3 + n / 1e6 - Date.now()) < 60_000, 'a start from the wall clock');
    await sdk.provider.shutdown();
    await herald.provider.shutdown();
  });

  it('samples as the provider’s sampler decides, the parent’s decision kept by its children', () => {
    const decisions = (made: 'sdk' | 'herald') => {
      const provider = new BasicTracerProvider({
        idGenerator: countedIds(),
        sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.5) }),
      });
      const sdkTracer = provider.getTracer('herald');
      const tracer = made === 'sdk' ? sdkTracer : heraldTracerOf(sdkTracer, { onEnd: () => {} });
      const out: string[] = [];
      for (let i = 0; i < 64; i++) {
        const root = tracer.startSpan(`root ${i}`, {}, ROOT_CONTEXT);
        const child = tracer.startSpan(`child ${i}`, {}, trace.setSpan(ROOT_CONTEXT, root));
        out.push(
          `${root.isRecording()} ${root.spanContext().traceFlags} ${child.spanContext().traceFlags} ${child.spanContext().traceId === root.spanContext().traceId}`,
        );
        child.end();
        root.end();
      }
      return out;
    };
    const herald = decisions('herald');
    assert.deepEqual(herald, decisions('sdk'));
    // Both decisions were met: some traces sampled, some not.
    assert.ok(herald.some((d) => d.startsWith('true')) && herald.some((d) => d.startsWith('false')));
  });
});

describe('OTLP/protobuf: Herald’s encoder writes what the SDK’s serializer writes', () => {
  it('decodes to the same message, field by field, for spans with every kind of field', async () => {
    const { spans, provider } = madeSpans();
    assert.equal(spans.length, 4);
    const sdk = ProtobufTraceSerializer.serializeRequest(spans as ReadableSpan[]) as Uint8Array;
    const ours = encodeTraceRequest(spans);
    assert.deepEqual(generated(ours), generated(sdk));
    assert.deepEqual(decoded(ours), decoded(sdk));

    // The comparison is not vacuous: the message holds what the spans were made with.
    const request = generated(ours) as {
      resourceSpans: Array<{
        schemaUrl: string;
        scopeSpans: Array<{
          schemaUrl: string;
          scope: { version: string };
          spans: Array<{
            name: string;
            traceState: string;
            parentSpanId: string;
            attributes: unknown[];
            droppedAttributesCount: number;
            droppedEventsCount: number;
            droppedLinksCount: number;
            events: Array<{ droppedAttributesCount: number }>;
            links: Array<{ traceState: string; attributes: unknown[]; droppedAttributesCount: number }>;
            status: { code: number; message: string };
          }>;
        }>;
      }>;
    };
    const [rs] = request.resourceSpans;
    assert.equal(rs?.schemaUrl, 'https://opentelemetry.io/schemas/1.26.0');
    const [ss] = rs?.scopeSpans ?? [];
    assert.equal(ss?.schemaUrl, 'https://opentelemetry.io/schemas/1.24.0');
    assert.equal(ss?.scope.version, '1.2.3');
    const [server, consumer, wide] = ss?.spans ?? [];
    assert.equal(server?.status.message, 'failed: ✗');
    assert.equal(server?.traceState, 'vendor=a1,other=b-2');
    assert.equal(server?.events[1]?.droppedAttributesCount, 1);
    assert.equal(consumer?.droppedEventsCount, 2);
    assert.equal(consumer?.droppedLinksCount, 1);
    assert.equal(consumer?.links[0]?.droppedAttributesCount, 0);
    assert.equal(wide?.droppedAttributesCount, 100);
    assert.equal(wide?.attributes.length, 600);
    // Span and link flags (fields 16 and 6), which the generated types do not know.
    const resourceSpans = (decoded(ours)[1] as Wire[])[0] as Wire;
    const spansOnWire = ((resourceSpans[2] as Wire[])[0] as Wire)[2] as Wire[];
    const spanFlags = spansOnWire.map((span) => span[16]);
    assert.deepEqual(spanFlags, [['fixed32 769'], ['fixed32 257'], ['fixed32 257'], ['fixed32 257']]);
    const linkFlags = ((spansOnWire[1] as Wire)[13] as Wire[]).map((link) => link[6]);
    assert.deepEqual(linkFlags, [['fixed32 257'], ['fixed32 768']]);
    await provider.shutdown();
  });

  it('writes the same message again from its kept resource, scope, keys and repeated values', async () => {
    const first = madeSpans();
    const second = madeSpans();
    // Two batches of different resources one after the other, then the first again.
    for (const spans of [first.spans, second.spans, first.spans]) {
      assert.deepEqual(
        decoded(encodeTraceRequest(spans)),
        decoded(ProtobufTraceSerializer.serializeRequest(spans as ReadableSpan[]) as Uint8Array),
      );
    }
    await first.provider.shutdown();
    await second.provider.shutdown();
  });

  it('exports a batch a resource and scope through the SDK’s OTLP/HTTP plumbing, every span arriving', async () => {
    const otlp = await startOtlpReceiver();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.url;
    process.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE = '3';
    try {
      // Two providers (two resources) and two scopes on one processor, their spans interleaved:
      // each change of resource or scope ends a batch.
      const processor = protobufSpanProcessor();
      const providers = ['herald-a', 'herald-b'].map(
        (service) =>
          new BasicTracerProvider({
            resource: resourceFromAttributes({ 'service.name': service }),
            spanProcessors: [processor],
          }),
      );
      const sent: Array<{ name: string; service: string; index: number }> = [];
      for (let i = 0; i < 12; i++) {
        const provider = providers[i % 5 === 4 ? 1 : 0] as BasicTracerProvider;
        const tracer = provider.getTracer(i % 4 === 3 ? 'other' : 'herald');
        tracer.startSpan(`span ${i}`, { attributes: { 'herald.index': i } }, ROOT_CONTEXT).end();
        sent.push({ name: `span ${i}`, service: i % 5 === 4 ? 'herald-b' : 'herald-a', index: i });
      }
      await processor.forceFlush();
      assert.deepEqual(otlp.undecoded, []);
      const received = otlp.spans
        .map((s) => ({ name: s.name, service: s.service, index: s.attributes['herald.index'] }))
        .sort((a, b) => Number(a.index) - Number(b.index));
      assert.deepEqual(received, sent);
      assert.ok(otlp.contentTypes.every((type) => type === 'application/x-protobuf'));
      await processor.shutdown();
    } finally {
      delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
      delete process.env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE;
      await otlp.close();
    }
  });
});
