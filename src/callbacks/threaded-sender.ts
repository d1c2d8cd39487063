import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import type { CallbackStore } from '../store/port/callbacks.ts';
import { type Line, openLine } from '../thread-calls.ts';
import { SENDER_WRITES, type SenderWrites } from './sender-store.ts';

/** What the sender thread serves (sender-thread.ts); it calls SenderWrites on the starting thread. */
export interface SenderThreadCalls {
  /** Status changes were committed: read the log at once, not at the next poll. */
  changed(): void;
  /** Records what was sent and lets the leases go (through the starting thread), then closes its store. */
  close(): Promise<void>;
}

const ENTRY = new URL('./sender-thread.js', import.meta.url);
/** How often a worker with no sender thread looks for a first callback. */
const LOOK_MS = 200;
/**
 * After a thread ends on its own, the next one starts after this, doubled for each thread in a
 * row that ended within RESTART_MAX_MS of its start (one that cannot open its store would
 * otherwise be started and logged five times a second), up to RESTART_MAX_MS.
 */
const RESTART_MS = 1000;
const RESTART_MAX_MS = 30_000;

export interface CallbackThreadDeps {
  config: Config;
  /** The store of the starting thread: the sender's writes go through it. */
  callbacks: CallbackStore;
  log: Logger;
}

/**
 * Runs the callback sender (sender.ts) in a thread of its own, started once a callback exists: a
 * Herald with none never loads it. The thread reads the status log, makes, signs and sends the
 * messages and counts their attempts on its own event loop, so a burst of callbacks costs the
 * dispatch thread only the writes that record them. A thread that ends (it should not) is
 * started again, after a second and longer for one that keeps ending; what it had leased is read
 * again by the next one once its leases end.
 */
export function startCallbackThread(deps: CallbackThreadDeps): {
  /** Status changes were committed: the sender reads the log at once, not at its next poll. */
  changed(): void;
  close(): Promise<void>;
} {
  const { callbacks, log } = deps;
  let worker: { thread: Worker; line: Line<SenderThreadCalls> } | undefined;
  let looking = false;
  let closing = false;
  /** Threads in a row that ended within RESTART_MAX_MS of their start. */
  let failures = 0;
  let notBefore = 0;

  function start(): void {
    const startedAt = Date.now();
    const started = new Worker(ENTRY, {
      workerData: { config: deps.config },
      resourceLimits: { maxYoungGenerationSizeMb: 8 },
    });
    started.unref();
    // Only the sender's writes are served, whatever the thread asks.
    const writes = Object.fromEntries(
      SENDER_WRITES.map((method) => [method, callbacks[method].bind(callbacks)]),
    ) as SenderWrites;
    const line = openLine<SenderThreadCalls, SenderWrites>(started, writes);
    started.on('error', (error) => log.error({ err: error }, 'callback sender thread failed'));
    started.on('exit', () => {
      line.end(new Error('the callback sender thread ended'));
      if (worker?.thread === started) worker = undefined;
      if (closing) return;
      const now = Date.now();
      failures = now - startedAt < RESTART_MAX_MS ? failures + 1 : 1;
      const delay = Math.min(RESTART_MS * 2 ** (failures - 1), RESTART_MAX_MS);
      notBefore = now + delay;
      log.warn({ restartInMs: delay }, 'callback sender thread ended; starting it again');
    });
    worker = { thread: started, line };
  }

  async function look(): Promise<void> {
    if (worker || looking || closing || Date.now() < notBefore) return;
    looking = true;
    try {
      if ((await callbacks.enabled()).length > 0 && !closing) start();
    } catch (error) {
      log.warn({ err: error }, 'looking for callbacks failed; retrying');
    } finally {
      looking = false;
    }
  }

  const timer = setInterval(() => void look(), LOOK_MS);
  timer.unref();
  void look();
  return {
    changed: () => worker?.line.tell('changed'),
    async close() {
      closing = true;
      clearInterval(timer);
      const ending = worker;
      if (!ending) return;
      // The thread records what it sent and lets its leases go, through this thread's store;
      // one that ended meanwhile has nothing more to say.
      await ending.line.call('close').catch(() => undefined);
      await ending.thread.terminate();
    },
  };
}
