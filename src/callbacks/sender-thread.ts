import { parentPort, workerData } from 'node:worker_threads';
import { systemClock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import { createLogger } from '../http/logger.ts';
import { lowerOwnPriority, nameOwnThread } from '../os-thread.ts';
import { createStore } from '../store/create.ts';
import { openLine } from '../thread-calls.ts';
import { startTracing } from '../tracing/sdk.ts';
import { startCallbackSender } from './sender.ts';
import {
  SENDER_READS,
  SENDER_WRITES,
  type SenderCallbacks,
  type SenderWrite,
  type SenderWrites,
} from './sender-store.ts';
import type { SenderThreadCalls } from './threaded-sender.ts';

/**
 * The body of the callback sender's thread (threaded-sender.ts has the other side): the sender
 * on a connection of its own for its reads, with its writes made by the starting thread.
 */
const port = parentPort;
if (!port) throw new Error('sender-thread.ts runs as a worker thread');
const { config } = workerData as { config: Config };
nameOwnThread('herald-sender');
const log = createLogger(config.logLevel, config.logFormat).child({ role: 'worker', part: 'callbacks' });

/**
 * The sender thread's nice value from the first time it falls behind (a burst): deliveries come
 * first. On a busy machine the scheduler then gives this thread the time the dispatch and API
 * threads leave (Linux sets nice per thread), so a burst's callbacks wait instead of slowing the
 * burst. Until then the thread runs at the process's priority, so that it warms up as fast as
 * the rest; it is not raised again after a burst (an unprivileged process may lower a priority
 * but not raise it). Bench, 2 cores: 100,000 NORMAL with one callback, dispatch at 0.71x and
 * 0.76x of its speed without at nice 0, 0.82x at nice 10; at nice 10 from the start, the first
 * two seconds of a steady 1,000/s waited 0.3 to 0.6 s (lag p99 516 to 1,284 ms).
 */
const BEHIND_NICE = 10;

// Open from the start, for the sender's writes; what the starting thread sends before the sender
// runs is served, in order, once it does.
let run: (served: SenderThreadCalls) => void = () => undefined;
const running = new Promise<SenderThreadCalls>((resolve) => {
  run = resolve;
});
const starter = openLine<SenderWrites, SenderThreadCalls>(port, {
  changed: () => void running.then((served) => served.changed()),
  close: () => running.then((served) => served.close()),
});

/** A write made by the starting thread (typed by SenderCallbacks below). */
const write = starter.call as (method: SenderWrite, ...args: unknown[]) => Promise<unknown>;
const remote =
  (method: SenderWrite) =>
  (...args: unknown[]) =>
    write(method, ...args);

// This thread's own tracer provider (its callback spans), when the OTEL_* variables ask for one.
const tracing = await startTracing(config);
// Reads only: a small pool on PostgreSQL, the reader's page cache on SQLite.
const store = await createStore({ ...config, databasePoolSize: 2 }, { claims: false });
const local = store.callbacks;
const callbacks = Object.fromEntries([
  ...SENDER_READS.map((method) => [method, local[method].bind(local)]),
  ...SENDER_WRITES.map((method) => [method, remote(method)]),
]) as SenderCallbacks;
const sender = startCallbackSender({
  callbacks,
  statusLog: store.statusLog,
  clock: systemClock,
  log,
  allowedHosts: config.callbackAllowedHosts ?? [],
  keyEncryptionSecret: config.keyEncryptionSecret,
  concurrency: config.callbackConcurrency,
  ratePerSecond: config.callbackRate,
  tenantConcurrency: config.callbackTenantConcurrency,
  onBehind: () => lowerOwnPriority(BEHIND_NICE),
});

run({
  changed: () => sender.changed(),
  close: () =>
    sender
      .close()
      .finally(() => store.close())
      .finally(() => tracing?.shutdown()),
});
