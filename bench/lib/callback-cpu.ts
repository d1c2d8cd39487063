import type { Api } from './api.ts';
import { batch } from './bodies.ts';
import { addCallback, type Receiver, receiverEnv, startReceiver } from './callback-receiver.ts';
import { deploy } from './deploy.ts';
import { watchDrain } from './drain.ts';
import { progress } from './log.ts';
import type { Sizes } from './options.ts';
import { runPaced } from './paced.ts';
import { cpuByThread, perThreadShare, writeCallsOf } from './proc.ts';
import { median } from './stats.ts';

/** Notifications in each POST /notifications/batch of the window: ingest costs both runs alike, and little. */
const BATCH = 100;
/** The receiver sets the pace, not HERALD_CALLBACK_RATE's default 2,000 a second. */
const CALLBACK_RATE = 50_000;

/** The window of one run: notifications a second, and for how long, after a warm-up of `warmMs`. */
export type CallbackCpuSpec = Sizes['callbacks']['cpu'];

/** One run's CPU a notification in its window, µs by thread (`cpuByThread`'s names). */
interface Window {
  threads: Record<string, number>;
  accepted: number;
  /** Write system calls a notification, all threads (the requests' writes among them). */
  writes: number;
}

/**
 * Accepts `perSecond` NORMAL (batches of BATCH, an open-loop sender in its own process) for
 * `ms`, then waits until they are delivered.
 */
async function paced(api: Api, receiver: Receiver, spec: CallbackCpuSpec, ms: number) {
  const started = Date.now();
  const before = receiver.lags.length;
  const sent = await runPaced({
    url: api.url,
    path: '/notifications/batch',
    headers: api.auth,
    body: batch(BATCH),
    everyMs: (1000 * BATCH) / spec.perSecond,
    forMs: ms,
    collect: false,
  });
  if (sent.failures.length > 0) throw new Error(`paced sender: ${sent.failures.join('; ')}`);
  const drained = await watchDrain(api, 60_000, 'callback cpu');
  if (drained.left > 0) throw new Error(`callback cpu: ${drained.left} still outstanding`);
  return { accepted: sent.acceptedCount, started, before };
}

/**
 * One run on `npm start`'s layout (one process, SQLite), with one callback (DELIVERED) or none:
 * a warm-up at the window's rate (the sender's thread started and its code compiled), then the
 * window, whose CPU is read per thread from /proc/<pid>/task/*\/schedstat at its start and at its
 * end, a fixed time after its start. Both runs pay the same idle polls for the same wall time,
 * so their difference is what the callbacks cost, not the longer drain's idle loop.
 */
async function window(spec: CallbackCpuSpec, callback: boolean): Promise<Window> {
  const receiver = await startReceiver();
  const herald = await deploy('sqlite', { env: receiverEnv(receiver, CALLBACK_RATE) });
  const pid = herald.processes[0]?.pid as number;
  const settleMs = spec.forMs + 5_000;
  try {
    if (callback) await addCallback(herald.api, receiver);
    await paced(herald.api, receiver, spec, spec.warmMs);
    if (callback) await received(receiver, receiver.lags.length, 30_000);
    const before = cpuByThread(pid);
    const writesBefore = writeCallsOf(pid);
    const run = await paced(herald.api, receiver, spec, spec.forMs);
    if (callback) await received(receiver, run.before + run.accepted, run.started + settleMs - Date.now());
    const left = run.started + settleMs - Date.now();
    if (left < 0)
      progress(`callback cpu: the window ran ${-left} ms past its ${settleMs} ms (a loaded machine)`);
    else await new Promise((r) => setTimeout(r, left));
    return {
      threads: perThreadShare(before, cpuByThread(pid), run.accepted),
      accepted: run.accepted,
      writes: (writeCallsOf(pid) - writesBefore) / run.accepted,
    };
  } finally {
    await herald.stop();
    await receiver.close();
  }
}

/** Waits until the receiver has `count` callbacks (up to `ms`, at least 20 s). */
async function received(receiver: Receiver, count: number, ms: number): Promise<void> {
  const deadline = Date.now() + Math.max(ms, 20_000);
  while (receiver.lags.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  if (receiver.lags.length < count) throw new Error(`${receiver.lags.length} of ${count} callbacks received`);
}

/** One round: µs a callback by thread (with less without, each a notification), and both runs' totals. */
export interface CallbackCpuRound {
  perCallback: number;
  threads: Record<string, number>;
  without: number;
  with: number;
  accepted: number;
  /** Write system calls a callback, all threads: with less without. */
  writes: number;
}

const sum = (threads: Record<string, number>) => Object.values(threads).reduce((a, b) => a + b, 0);

/**
 * Herald's CPU per status callback, all threads (#48): runs without a callback and with one, in
 * turn, `rounds` times, each the same window at the same rate; a round's figure is the run with
 * less the run without, per notification, by thread.
 */
export async function callbackCpu(spec: CallbackCpuSpec, rounds: number): Promise<CallbackCpuRound[]> {
  const out: CallbackCpuRound[] = [];
  for (let i = 1; i <= rounds; i++) {
    const without = await window(spec, false);
    const withOne = await window(spec, true);
    const threads: Record<string, number> = {};
    for (const name of new Set([...Object.keys(without.threads), ...Object.keys(withOne.threads)]))
      threads[name] = (withOne.threads[name] ?? 0) - (without.threads[name] ?? 0);
    const round = {
      perCallback: sum(threads),
      threads,
      without: sum(without.threads),
      with: sum(withOne.threads),
      accepted: withOne.accepted,
      writes: withOne.writes - without.writes,
    };
    progress(
      `callback cpu round ${i}/${rounds}: ${round.perCallback.toFixed(1)} µs a callback (${byThread(threads)})`,
    );
    out.push(round);
  }
  return out;
}

/** "dispatch 4.5, main 12.3, ...": µs by thread. */
export const byThread = (share: Record<string, number>) =>
  Object.entries(share)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, us]) => `${name} ${us.toFixed(1)}`)
    .join(', ');

/** The rounds' medians, all threads and by thread. */
export function medianOf(rounds: readonly CallbackCpuRound[]): {
  all: number;
  threads: Record<string, number>;
} {
  const names = new Set(rounds.flatMap((r) => Object.keys(r.threads)));
  return {
    all: median(rounds.map((r) => r.perCallback)),
    threads: Object.fromEntries([...names].map((n) => [n, median(rounds.map((r) => r.threads[n] ?? 0))])),
  };
}
