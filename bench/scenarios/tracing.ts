import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spansOfProtobuf } from '../../test/helpers/peers/otlp.ts';
import { type Api, outstanding, queues } from '../lib/api.ts';
import { notification } from '../lib/bodies.ts';
import { type Deployment, deploy } from '../lib/deploy.ts';
import { acceptOrShed, type LoadResult, runLoad } from '../lib/load.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions, RoundSize } from '../lib/options.ts';
import { cpuByThread, threadsOf } from '../lib/proc.ts';
import { measured, type Row } from '../lib/report.ts';
import { median } from '../lib/stats.ts';
import type { Scenario } from './types.ts';

/**
 * An OTLP/HTTP endpoint that keeps each export's bytes and answers at once: decoding them while
 * Herald is measured would take the same two cores from it, so they are decoded after the run
 * (`spans`), to check that every span arrived.
 */
async function startKeepingCollector(): Promise<{
  url: string;
  exports: () => number;
  spans: () => Map<string, number>;
  stop(): Promise<void>;
}> {
  const bodies: Buffer[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      bodies.push(Buffer.concat(chunks));
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports: () => bodies.length,
    spans: () => {
      const byName = new Map<string, number>();
      for (const body of bodies)
        for (const span of spansOfProtobuf(body)) byName.set(span.name, (byName.get(span.name) ?? 0) + 1);
      return byName;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Waits until nothing is waiting or in flight; the seconds it took (polled every 100 ms). */
async function drained(api: Api, label: string): Promise<number> {
  const started = performance.now();
  while (outstanding(await queues(api)) > 0) {
    if (performance.now() - started > 600_000) throw new Error(`${label}: not drained in 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return (performance.now() - started) / 1000;
}

/** One side's round: its ingest, then its drain, so that no backlog spills into the other's round. */
interface Round {
  load: LoadResult;
  accepted: number;
  /** Accepted and delivered per second: the accepted over the load's seconds and the drain's. */
  endToEnd: number;
  /** The Herald process's CPU time (load and drain) in µs per accepted notification, by thread. */
  cpu: Record<string, number>;
  /** Its threads' time runnable but waiting for a CPU, in µs per accepted notification. */
  waitUs: number;
}

/** What the Herald process's threads waited for a CPU so far, in ms (schedstat). */
const waitedMs = (pid: number) => threadsOf(pid).reduce((ms, t) => ms + t.waitMs, 0);

async function round(herald: Deployment, size: RoundSize, connections: number, what: string): Promise<Round> {
  const pid = (herald.processes[0] as { pid: number }).pid;
  const cpuBefore = cpuByThread(pid);
  const waitBefore = waitedMs(pid);
  const load = acceptOrShed(
    await runLoad({
      method: 'POST',
      path: '/notifications',
      headers: herald.api.auth,
      body: JSON.stringify(notification()),
      connections,
      urls: herald.urls,
      seconds: size.seconds,
      amount: size.amount,
    }),
    201,
    what,
  );
  const drainSeconds = await drained(herald.api, what);
  const accepted = load.statusCodes['201'] ?? 0;
  const cpu: Record<string, number> = {};
  let total = 0;
  for (const [thread, ms] of Object.entries(cpuByThread(pid))) {
    cpu[thread] = ((ms - (cpuBefore[thread] ?? 0)) * 1000) / accepted;
    total += cpu[thread];
  }
  cpu.total = total;
  const waitUs = ((waitedMs(pid) - waitBefore) * 1000) / accepted;
  return { load, accepted, endToEnd: accepted / (load.seconds + drainSeconds), cpu, waitUs };
}

/**
 * Ingest and dispatch with tracing on against off (docs/tracing.md): two `npm start` Heralds on
 * SQLite, one exporting every span (100 % sampled, http/protobuf, to a local endpoint that keeps
 * them), one without the OTEL_* variables, loaded in alternating rounds with POST
 * /notifications while each delivers to the sandbox. Each round ends when its Herald's queue is
 * empty, so one's backlog never drains in the other's round; a round counts both ingest (the
 * accepted requests per second while loaded) and ingest with dispatch (accepted over the time
 * until the last was delivered). After the run the spans are decoded and counted: a server span
 * for every request, a process and a send span for every accepted notification.
 */
/** A round's CPU µs a notification, by thread, for the progress line. */
const cpuText = (r: Round) =>
  `${Object.entries(r.cpu)
    .map(([thread, us]) => `${thread} ${Math.round(us)}`)
    .join(' ')} (wait ${Math.round(r.waitUs)})`;

/** The rounds' median CPU µs a notification of each thread. */
const byThread = (rounds: Round[]) =>
  Object.keys(rounds[0]?.cpu ?? {})
    .map((thread) => `${thread} ${Math.round(median(rounds.map((r) => r.cpu[thread] ?? 0)))}`)
    .join(', ');

/** The traced Herald's span queue in each thread (OTEL_BSP_MAX_QUEUE_SIZE). */
const BSP_QUEUE = 65_536;

async function tracingRows(options: BenchOptions): Promise<Row[]> {
  const name = 'tracing';
  const { ingest, rounds } = options.sizes;
  const collector = await startKeepingCollector();
  const traced = await deploy('sqlite', {
    // The batch processor drops spans past its queue (2,048 by default): at this rate the dispatch
    // thread makes about 14,000 a second, so the queue is raised until none is lost (docs/tracing.md).
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_TRACES_SAMPLER: 'always_on',
      OTEL_BSP_MAX_QUEUE_SIZE: String(BSP_QUEUE),
    },
  });
  const plain = await deploy('sqlite', {});
  const on: Round[] = [];
  const off: Round[] = [];
  let tracedStopped = false;
  try {
    progress(`${name}: warm-up`);
    on.push(await round(traced, ingest.warmup, ingest.connections, `${name} warm-up (traced)`));
    await round(plain, ingest.warmup, ingest.connections, `${name} warm-up (untraced)`);
    for (let i = 1; i <= rounds; i++) {
      const t = await round(traced, ingest.round, ingest.connections, `${name} round ${i} (traced)`);
      const u = await round(plain, ingest.round, ingest.connections, `${name} round ${i} (untraced)`);
      on.push(t);
      off.push(u);
      progress(
        `${name} round ${i}/${rounds}: ingest ${Math.round(t.load.rps)}/s against ${Math.round(u.load.rps)}/s ` +
          `(${(t.load.rps / u.load.rps).toFixed(3)}), with dispatch ${Math.round(t.endToEnd)}/s against ` +
          `${Math.round(u.endToEnd)}/s (${(t.endToEnd / u.endToEnd).toFixed(3)}); CPU µs a notification ` +
          `${cpuText(t)} against ${cpuText(u)}`,
      );
    }
    // Its shutdown exports what its processors still hold.
    await traced.stop();
    tracedStopped = true;
    const spans = collector.spans();
    const requests = on.reduce((n, r) => n + r.load.requests, 0);
    const accepted = on.reduce((n, r) => n + r.accepted, 0);
    const count = (span: string) => spans.get(span) ?? 0;
    // The load generator counts no request still in flight when a round's time is up, though
    // Herald accepts and delivers it: the process spans count every accepted notification, and
    // each of those requests has its server span (its client left before the answer, or not).
    const processed = count('process email');
    if (
      count('POST /notifications') < Math.max(requests, processed) ||
      processed < accepted ||
      count('render') !== processed ||
      count('send sandbox') !== processed
    )
      throw new Error(
        `spans lost: ${requests} requests and ${accepted} accepted, spans ${JSON.stringify(Object.fromEntries(spans))}`,
      );
    const ratios = (of: (r: Round) => number) => off.map((u, i) => of(on[i + 1] as Round) / of(u));
    const ingestRatios = ratios((r) => r.load.rps);
    const endToEndRatios = ratios((r) => r.endToEnd);
    const per = (values: number[]) => values.map((r) => r.toFixed(3)).join(', ');
    const note =
      `median of ${rounds} alternating rounds, ${ingest.connections} connections, npm start (dispatch to the ` +
      `sandbox meanwhile; each round ends when its queue is empty), always_on, http/protobuf, ` +
      `OTEL_BSP_MAX_QUEUE_SIZE=${BSP_QUEUE}; every span ` +
      `arrived (${count('POST /notifications')} server spans for ${requests} requests counted, ${processed} ` +
      `process, render and send spans for ${accepted} counted accepted, in ${collector.exports()} exports)`;
    const target = { bound: 0.8, better: 'higher' as const, text: '>= 0.8' };
    return [
      measured(name, 'accepted and delivered/s with tracing on, ratio to off', median(endToEndRatios), 'x', {
        target,
        note: `${note}; per round: ${per(endToEndRatios)}`,
      }),
      measured(name, 'requests/s with tracing on, ratio to off', median(ingestRatios), 'x', {
        target,
        note: `the same rounds' ingest alone; per round: ${per(ingestRatios)}`,
      }),
      measured(
        name,
        'Herald CPU µs per notification, traced',
        median(on.slice(1).map((r) => r.cpu.total ?? 0)),
        'µs',
        {
          note: `by thread, median: ${byThread(on.slice(1))}; waiting for a CPU ${Math.round(median(on.slice(1).map((r) => r.waitUs)))} µs`,
        },
      ),
      measured(
        name,
        'Herald CPU µs per notification, untraced',
        median(off.map((r) => r.cpu.total ?? 0)),
        'µs',
        {
          note: `by thread, median: ${byThread(off)}; waiting for a CPU ${Math.round(median(off.map((r) => r.waitUs)))} µs`,
        },
      ),
      measured(name, 'traced requests/s', median(on.slice(1).map((r) => r.load.rps)), '/s'),
      measured(name, 'untraced requests/s', median(off.map((r) => r.load.rps)), '/s'),
      measured(name, 'traced accepted and delivered/s', median(on.slice(1).map((r) => r.endToEnd)), '/s'),
      measured(name, 'untraced accepted and delivered/s', median(off.map((r) => r.endToEnd)), '/s'),
    ];
  } finally {
    await Promise.all([tracedStopped ? undefined : traced.stop(), plain.stop()]);
    await collector.stop();
  }
}

export const tracingScenario: Scenario = {
  name: 'tracing',
  title: '#53. Tracing: ingest and dispatch with OpenTelemetry on (100 % sampled) against off',
  run: tracingRows,
};
