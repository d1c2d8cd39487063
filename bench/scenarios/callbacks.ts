import { setMaxListeners } from 'node:events';
import { get as httpGet } from 'node:http';
import { type Api, requireRoute } from '../lib/api.ts';
import { notification } from '../lib/bodies.ts';
import { byThread, type CallbackCpuRound, callbackCpu, medianOf } from '../lib/callback-cpu.ts';
import { addCallback, receiverEnv, startReceiver } from '../lib/callback-receiver.ts';
import { type Deployment, deploy } from '../lib/deploy.ts';
import { deliveredSpan, watchDrain } from '../lib/drain.ts';
import { fillBacklog } from '../lib/fill.ts';
import { probeHealth } from '../lib/health-probe.ts';
import { acceptOrShed, runLoad } from '../lib/load.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions, RoundSize } from '../lib/options.ts';
import { runPaced } from '../lib/paced.ts';
import { machineCpuMs, threadTimesOf } from '../lib/proc.ts';
import { measured, type Row } from '../lib/report.ts';
import { SseCounter } from '../lib/sse-count.ts';
import { followLag } from '../lib/sse-lag.ts';
import { median, percentile } from '../lib/stats.ts';
import { neighbourLags, neighbourRows } from './callback-neighbour.ts';
import type { Scenario } from './types.ts';

const CALLBACK_RATE = 50_000;

/** What the bench's streams received: status events, and how often Herald cut one (4 MiB behind). */
interface Streamed {
  events: number;
  reconnects: number;
}

/** Resolves once the streams have received nothing new for a second (caught up). */
async function settled(streamed: Streamed): Promise<void> {
  let last = -1;
  let quiet = 0;
  while (quiet < 4) {
    await new Promise((r) => setTimeout(r, 250));
    quiet = streamed.events === last ? quiet + 1 : 0;
    last = streamed.events;
  }
}

/**
 * Connects `count` tenant-wide live streams to `api`: readers that count status events (without
 * decoding them) and, like a browser's EventSource, reconnect with Last-Event-ID when Herald
 * closes a stream that fell 4 MiB behind, so each receives every change once, however far behind.
 * They read with node:http, not fetch: a web stream costs more a chunk, and the bench shares the
 * 2 cores with Herald.
 */
async function connectStreams(api: Api, count: number, signal: AbortSignal): Promise<Streamed> {
  const counters: SseCounter[] = [];
  const total = { reconnects: 0 };
  // Each open stream listens to the one signal (Node warns past 10).
  setMaxListeners(count + 10, signal);
  const url = `${api.url}/notifications/stream`;
  /** Resolves once the stream has answered 200; reconnects when it ends, until `signal`. */
  const open = (counter: SseCounter) =>
    new Promise<void>((resolve, reject) => {
      const headers =
        counter.lastId === undefined ? api.auth : { ...api.auth, 'last-event-id': counter.lastId };
      const request = httpGet(url, { headers, signal }, (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          reject(new Error(`GET /notifications/stream: ${response.statusCode}`));
          return;
        }
        resolve();
        response.on('data', (chunk: Buffer) => counter.feed(chunk));
        // A stream cut mid-answer errors, then closes: the close reconnects.
        response.on('error', () => undefined);
        response.once('close', () => {
          if (signal.aborted) return;
          total.reconnects += 1;
          counter.reset();
          open(counter).catch((error: unknown) => {
            if (!signal.aborted) progress(`callbacks: a stream reader stopped: ${String(error)}`);
          });
        });
      });
      request.on('error', reject);
    });
  for (let i = 0; i < count; i++) {
    const counter = new SseCounter();
    counters.push(counter);
    await open(counter);
  }
  return {
    get events() {
      return counters.reduce((sum, c) => sum + c.count, 0);
    },
    get reconnects() {
      return total.reconnects;
    },
  };
}

interface Drained {
  perSecond: number;
  lags: number[];
  /** What the streams had received when the drain ended. */
  streamed: Streamed;
  /** GET /health every 50 ms through the drain (in each of the three, so they pay the same). */
  health: { ms: number[]; failed: number };
  /**
   * From the drain's start to its last callback's receipt, a notification's share in µs of:
   * Herald's threads' time on a CPU, and waiting for one; the bench's (the receiver and the
   * streams' readers) time on a CPU. And the share of the machine's two cores left idle.
   */
  cpu: { herald: number; heraldWait: number; bench: number; idle: number };
}

/**
 * Drains `count` NORMAL to the sandbox on `npm start`'s layout (one process), with or without one
 * callback (DELIVERED), with `streams` live streams connected, and measures the drain rate from
 * the store's DELIVERED events, and each callback's lag from the change to its receipt.
 */
async function drain(count: number, streams: number, callback: boolean): Promise<Drained> {
  const receiver = callback ? await startReceiver() : undefined;
  const env = receiver ? receiverEnv(receiver, CALLBACK_RATE) : {};
  const label = callback ? (streams > 0 ? `a callback + ${streams} streams` : 'a callback') : 'baseline';
  const filler = await deploy('sqlite', { roles: 'auth,api', env });
  const dataDir = filler.processes[0]?.dataDir as string;
  try {
    await requireRoute(filler.api, 'GET', '/callbacks', undefined, 'status callbacks');
    if (receiver) await addCallback(filler.api, receiver);
    await fillBacklog(filler.api, count, 'NORMAL', `callbacks (${label}) backlog`, filler.urls);
  } finally {
    await filler.stop();
  }
  progress(`callbacks (${label}): draining ${count.toLocaleString('en-US')}`);
  const runner = await deploy('sqlite', { dataDir, env });
  const heraldPid = runner.processes[0]?.pid as number;
  const cpuAtStart = {
    herald: threadTimesOf(heraldPid),
    bench: threadTimesOf('self'),
    machine: machineCpuMs(),
  };
  const streaming = new AbortController();
  // Stopped however the drain ends (the prober is a process of its own).
  const probe = probeHealth(runner.api.url, 50);
  try {
    const streamed = await connectStreams(runner.api, streams, streaming.signal);
    const drained = await watchDrain(runner.api, Math.max(120_000, count), `callbacks (${label})`);
    const health = await probe.stop();
    if (drained.left > 0) throw new Error(`${drained.left} still outstanding`);
    if (receiver) {
      const deadline = Date.now() + Math.max(60_000, count);
      while (receiver.lags.length < count && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
    }
    const [machine, herald, bench] = [machineCpuMs(), threadTimesOf(heraldPid), threadTimesOf('self')];
    const perNotification = (ms: number) => (ms * 1000) / count;
    const cpu = {
      herald: perNotification(herald.runMs - cpuAtStart.herald.runMs),
      heraldWait: perNotification(herald.waitMs - cpuAtStart.herald.waitMs),
      bench: perNotification(bench.runMs - cpuAtStart.bench.runMs),
      idle: (machine.idle - cpuAtStart.machine.idle) / (machine.total - cpuAtStart.machine.total),
    };
    const span = await deliveredSpan({ dataDir });
    return {
      perSecond: span?.perSecond ?? drained.perSecond,
      lags: receiver?.lags ?? [],
      streamed: { events: streamed.events, reconnects: streamed.reconnects },
      health,
      cpu,
    };
  } finally {
    streaming.abort();
    // Its result matters only when the drain went through (then it was taken above).
    await probe.stop().catch(() => undefined);
    await runner.stop();
    await receiver?.close();
  }
}

/**
 * Callback lag while the receiver keeps up: notifications accepted at a steady `perSecond` (an
 * open-loop sender in its own process) on `npm start`'s layout with one callback (DELIVERED),
 * each callback's lag from the change to its receipt, under the default HERALD_CALLBACK_RATE
 * (2,000/s). The burst above asks the bench's receiver, on the same 2 cores as Herald, for as
 * many callbacks a second as dispatch makes changes. The steady rate starts once one callback
 * has arrived: the first callback of a process waits for the sender's thread to start (reported
 * apart, `firstMs`: from the callback's creation to the receipt of a change made right after).
 * One tenant-wide live stream is read meanwhile: its lag is each change's, to its SSE event.
 */
async function steady(
  perSecond: number,
  forMs: number,
): Promise<{ lags: number[]; firstMs: number; streamLags: number[] }> {
  const receiver = await startReceiver();
  const herald = await deploy('sqlite', { env: receiverEnv(receiver) });
  try {
    await addCallback(herald.api, receiver);
    const created = Date.now();
    const first = await herald.api.request('POST', '/notifications', notification('NORMAL'));
    if (first.status !== 201) throw new Error(`POST /notifications: ${first.status}`);
    while (receiver.lags.length === 0 && Date.now() - created < 60_000)
      await new Promise((r) => setTimeout(r, 5));
    if (receiver.lags.length === 0) throw new Error('the first callback never arrived');
    const firstMs = Date.now() - created;
    receiver.lags.length = 0;
    const stream = await followLag(herald.api);
    progress(`callbacks (steady): ${perSecond.toLocaleString('en-US')}/s for ${forMs / 1000} s`);
    const sent = await runPaced({
      url: herald.api.url,
      path: '/notifications',
      headers: herald.api.auth,
      body: JSON.stringify(notification('NORMAL')),
      everyMs: 1000 / perSecond,
      forMs,
      collect: false,
    });
    if (sent.failures.length > 0) throw new Error(`steady sender: ${sent.failures.join('; ')}`);
    const deadline = Date.now() + 60_000;
    while (receiver.lags.length < sent.acceptedCount && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    if (receiver.lags.length < sent.acceptedCount)
      throw new Error(`${receiver.lags.length} of ${sent.acceptedCount} callbacks received`);
    stream.close();
    return { lags: receiver.lags, firstMs, streamLags: stream.lags };
  } finally {
    await herald.stop();
    await receiver.close();
  }
}

/**
 * What one callback (every DELIVERED) and `streams` live streams cost ingest: POST
 * /notifications rounds (the ingest scenario's connections, body and round length) against two
 * `npm start` Heralds, one plain and one with them, in turn. After each round the Herald drains
 * (sends every callback, and catches its streams up) before the next round starts, so neither
 * round pays for the other's leftovers; what a round's own deliveries and callbacks cost while it runs is the cost measured.
 */
async function ingestCost(
  options: BenchOptions,
  streams: number,
): Promise<{ ratios: number[]; with: number[]; without: number[]; streamed: Streamed }> {
  const { ingest, rounds } = options.sizes;
  const receiver = await startReceiver();
  const plain = await deploy('sqlite', {});
  const listened = await deploy('sqlite', { env: receiverEnv(receiver, CALLBACK_RATE) });
  const streaming = new AbortController();
  let accepted = 0;
  try {
    await addCallback(listened.api, receiver);
    const streamed = await connectStreams(listened.api, streams, streaming.signal);
    const round = async (herald: Deployment, size: RoundSize, what: string) => {
      const result = acceptOrShed(
        await runLoad({
          urls: herald.urls,
          method: 'POST',
          path: '/notifications',
          headers: herald.api.auth,
          body: JSON.stringify(notification()),
          connections: ingest.connections,
          seconds: size.seconds,
          amount: size.amount,
        }),
        201,
        what,
      );
      const drained = await watchDrain(herald.api, 120_000, what);
      if (drained.left > 0) throw new Error(`${what}: ${drained.left} still outstanding`);
      if (herald === listened) {
        accepted += result.statusCodes['201'] ?? 0;
        const deadline = Date.now() + 120_000;
        while (receiver.lags.length < accepted && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 200));
        if (receiver.lags.length < accepted)
          throw new Error(`${what}: ${receiver.lags.length} of ${accepted} callbacks`);
        // Streams far behind are still being caught up: that work must not run into the next round.
        await settled(streamed);
      }
      return result.rps;
    };
    progress('callbacks (ingest): warm-up');
    await round(plain, ingest.warmup, 'callbacks ingest warm-up (plain)');
    await round(listened, ingest.warmup, 'callbacks ingest warm-up (with)');
    const out = { ratios: [] as number[], with: [] as number[], without: [] as number[], streamed };
    for (let i = 1; i <= rounds; i++) {
      const without = await round(plain, ingest.round, `callbacks ingest round ${i} (plain)`);
      const withThem = await round(listened, ingest.round, `callbacks ingest round ${i} (with)`);
      out.without.push(without);
      out.with.push(withThem);
      out.ratios.push(withThem / without);
      progress(
        `callbacks (ingest) round ${i}/${rounds}: ${Math.round(withThem)}/s with, ${Math.round(without)}/s without`,
      );
    }
    return out;
  } finally {
    streaming.abort();
    await Promise.all([plain.stop(), listened.stop()]);
    await receiver.close();
  }
}

export const callbacksScenario: Scenario = {
  name: 'callbacks',
  title: '15. Callbacks and live streams: lag, and their cost to dispatch',
  async run(options: BenchOptions): Promise<Row[]> {
    const { count, streams, steadyPerSecond, steadyMs } = options.sizes.callbacks;
    const { lags: steadyLags, firstMs, streamLags } = await steady(steadyPerSecond, steadyMs);
    // Another tenant's burst through many callbacks, with Herald's tenant share and without it.
    const neighbourSpec = {
      ...options.sizes.callbacks.neighbour,
      perSecond: steadyPerSecond / 5,
      forMs: steadyMs,
    };
    const besideLimited = await neighbourLags(neighbourSpec);
    const besideUnlimited = await neighbourLags({ ...neighbourSpec, tenantConcurrency: 100_000 });
    // One drain's speed varies by a quarter from one run to the next on this machine (0.70 to
    // 0.93 for the same ratio, 2026-11-26): the three drains run in turn, `rounds` times, and
    // each ratio is the median of its rounds'. The lags are those of every round together.
    const rounds: Array<{ baseline: Drained; callbackOnly: Drained; both: Drained }> = [];
    for (let i = 1; i <= options.sizes.rounds; i++) {
      const baseline = await drain(count, 0, false);
      const callbackOnly = await drain(count, 0, true);
      const both = await drain(count, streams, true);
      rounds.push({ baseline, callbackOnly, both });
      progress(
        `callbacks (burst) round ${i}/${options.sizes.rounds}: ${[baseline, callbackOnly, both].map((d) => Math.round(d.perSecond)).join(', ')}/s`,
      );
    }
    const ingested = await ingestCost(options, streams);
    const perCallback = await callbackCpu(options.sizes.callbacks.cpu, options.sizes.rounds);
    const n = count.toLocaleString('en-US');
    const rates = (which: 'baseline' | 'callbackOnly' | 'both') =>
      `${rounds.map((r) => Math.round(r[which].perSecond).toLocaleString('en-US')).join(', ')}/s`;
    const lagsOf = (which: 'callbackOnly' | 'both') => rounds.flatMap((r) => r[which].lags);
    const received = (lags: number[]) =>
      `${lags.length.toLocaleString('en-US')} of ${(count * rounds.length).toLocaleString('en-US')} callbacks received (${rounds.length} rounds of ${n})`;
    const lagRows = (which: 'callbackOnly' | 'both', what: string) => {
      const lags = lagsOf(which);
      return [
        measured('callbacks', `callback lag p50, change to receipt (${what})`, percentile(lags, 50), 'ms', {
          note: received(lags),
        }),
        measured('callbacks', `callback lag p99 (${what})`, percentile(lags, 99), 'ms', {
          target: { bound: 1000, better: 'lower', text: '<= 1 s' },
          note: received(lags),
        }),
      ];
    };
    const cost = (which: 'callbackOnly' | 'both', what: string, extra = '') => {
      const ratios = rounds.map((r) => r[which].perSecond / r.baseline.perSecond);
      return measured('callbacks', `dispatch with ${what} vs without (${n} NORMAL)`, median(ratios), '×', {
        target: { bound: 0.9, better: 'higher', text: '>= 0.9× (<= 10% less)' },
        note: `median of ${ratios.length} rounds; HERALD_CALLBACK_RATE=${CALLBACK_RATE}; per round: ${ratios.map((r) => r.toFixed(3)).join(', ')}; ${rates(which)} with, ${rates('baseline')} without, from the store's DELIVERED events${extra}`,
      });
    };
    // Whether the streams, catching up after each cut, leave the API's event loop to others.
    const healthRow = () => {
      const ms = rounds.flatMap((r) => r.both.health.ms);
      const failed = rounds.reduce((sum, r) => sum + r.both.health.failed, 0);
      return measured(
        'callbacks',
        `GET /health p99, drain with one callback and ${streams} streams`,
        percentile(ms, 99),
        'ms',
        {
          note: `every 50 ms through each drain with the callback and the streams; ${ms.length} probes, p50 ${percentile(ms, 50).toFixed(1)} ms, max ${Math.round(Math.max(...ms))} ms, ${failed} failed`,
        },
      );
    };
    // What each drain cost the machine's two cores: the budget the callback and the streams have.
    const cpuRow = (which: 'baseline' | 'callbackOnly' | 'both', what: string) => {
      const of = (key: keyof Drained['cpu']) => median(rounds.map((r) => r[which].cpu[key]));
      const each = rounds.map((r) => r[which].cpu.herald.toFixed(1)).join(', ');
      return measured('callbacks', `Herald's CPU a notification, drain ${what}`, of('herald'), 'µs', {
        note: `medians of ${rounds.length} rounds (${each} µs): every thread's time on a CPU, from the drain's start to its last callback's receipt; Herald's threads also waited ${of('heraldWait').toFixed(1)} µs a notification for a CPU; the bench's process meanwhile (the receiver and the streams' readers) ${of('bench').toFixed(1)} µs on a CPU; the two cores ${Math.round(of('idle') * 100)}% idle`,
      });
    };
    const steadyNote = `${steadyLags.length.toLocaleString('en-US')} notifications at ${steadyPerSecond.toLocaleString('en-US')}/s, all received (the receiver keeps up with this rate)`;
    return [
      measured(
        'callbacks',
        `callback lag p50, steady ${steadyPerSecond.toLocaleString('en-US')}/s`,
        percentile(steadyLags, 50),
        'ms',
        {
          note: steadyNote,
        },
      ),
      measured(
        'callbacks',
        `callback lag p99, steady ${steadyPerSecond.toLocaleString('en-US')}/s`,
        percentile(steadyLags, 99),
        'ms',
        {
          target: { bound: 1000, better: 'lower', text: '<= 1 s' },
          note: steadyNote,
        },
      ),
      measured(
        'callbacks',
        `live stream lag p50 / p99, steady ${steadyPerSecond.toLocaleString('en-US')}/s`,
        percentile(streamLags, 50),
        'ms',
        {
          note: `p99 ${percentile(streamLags, 99)} ms, max ${Math.max(...streamLags)} ms: one tenant-wide stream, each of its ${streamLags.length.toLocaleString('en-US')} changes from the change's time to the arrival of its event`,
        },
      ),
      measured('callbacks', 'first callback after the callback is created', firstMs, 'ms', {
        note: "from POST /callbacks's answer to the receipt of a change made right after: the worker finds the callback and starts the sender's thread",
      }),
      ...neighbourRows(neighbourSpec, besideLimited, besideUnlimited),
      ...lagRows('callbackOnly', 'one callback'),
      cost('callbackOnly', 'one callback'),
      cpuRow('baseline', 'without callbacks'),
      cpuRow('callbackOnly', 'with one callback'),
      cpuRow('both', `with one callback and ${streams} streams`),
      perCallbackRow(options.sizes.callbacks.cpu, perCallback),
      ...lagRows('both', `one callback and ${streams} streams`),
      measured(
        'callbacks',
        `ingest with one callback and ${streams} streams vs without`,
        median(ingested.ratios),
        '×',
        {
          target: { bound: 0.9, better: 'higher', text: '>= 0.9× (<= 10% less)' },
          note: `median of ${ingested.ratios.length} rounds, ${options.sizes.ingest.connections} connections, each drained with its callbacks before the next; per round: ${ingested.ratios.map((r) => r.toFixed(3)).join(', ')}; ${ingested.with.map((r) => Math.round(r)).join(', ')}/s with, ${ingested.without.map((r) => Math.round(r)).join(', ')}/s without; the streams received ${ingested.streamed.events.toLocaleString('en-US')} changes in all, reconnecting ${ingested.streamed.reconnects} times`,
        },
      ),
      healthRow(),
      cost(
        'both',
        `one callback and ${streams} streams`,
        `; the streams (read by the bench on the same 2 cores, reconnecting with Last-Event-ID when cut 4 MiB behind) had received ${rounds.map((r) => r.both.streamed.events.toLocaleString('en-US')).join(', ')} changes in all when the drain ended, after ${rounds.map((r) => r.both.streamed.reconnects).join(', ')} reconnects`,
      ),
    ];
  },
};

/**
 * The figure (#48): what one status callback costs Herald, all threads, on top of the
 * delivery it reports, from runs at one fixed rate with a callback and without (callback-cpu.ts).
 */
function perCallbackRow(spec: BenchOptions['sizes']['callbacks']['cpu'], rounds: CallbackCpuRound[]): Row {
  const { all, threads } = medianOf(rounds);
  return measured('callbacks', "Herald's CPU per status callback, all threads", all, 'µs', {
    target: { bound: 25, better: 'lower', text: '<= 25 µs' },
    note: `median of ${rounds.length} rounds (${rounds.map((r) => r.perCallback.toFixed(1)).join(', ')} µs), by thread ${byThread(threads)}: ${spec.perSecond.toLocaleString('en-US')} NORMAL a second accepted for ${spec.forMs / 1000} s after a warm-up, with one callback (DELIVERED) less without, each over a window of the same length, every thread's time on a CPU from /proc/<pid>/task/*/schedstat`,
  });
}
