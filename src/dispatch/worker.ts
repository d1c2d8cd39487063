import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../clock.ts';
import type { Wakeup } from '../notifications/wakeup.ts';
import type { ProviderDeps } from '../providers/types.ts';
import type { Scheduler } from './scheduler.ts';

/** The `worker` role's loop around one scheduler. */
export interface Worker {
  readonly scheduler: Scheduler;
  start(): void;
  /**
   * Graceful stop (SIGTERM): stop claiming, give running sends `graceMs` to finish, release
   * (abort) the rest back to the queue without using their attempts, write everything, return.
   */
  stop(graceMs?: number): Promise<void>;
}

export interface WorkerDeps {
  scheduler: Scheduler;
  wakeup: Wakeup;
  clock: Clock;
  pollMs: number;
  log: ProviderDeps['log'];
}

/**
 * What ends an idle wait's other waits. An abort without a reason makes a DOMException, with its
 * stack, every time the loop wakes: 1.8 % of the dispatch thread's profile in the abuse bench.
 */
const WAIT_OVER = Symbol('wait over');

export function createWorker(deps: WorkerDeps): Worker {
  const { scheduler, wakeup, clock, log } = deps;
  let running = false;
  let loop: Promise<void> | undefined;
  let stopWaiting: (() => void) | undefined;

  async function idle(): Promise<void> {
    const due = scheduler.nextDueAt();
    const delay = Math.max(1, Math.min(deps.pollMs, due === null ? deps.pollMs : due - clock.now()));
    // Whichever first: an ingest commit (wakeup), a send finishing, the next due row, the poll backstop.
    const ended = new AbortController();
    await new Promise<void>((resolve) => {
      stopWaiting = resolve;
      void Promise.race([wakeup.wait(delay, ended.signal), scheduler.settled(delay, ended.signal)]).then(() =>
        resolve(),
      );
    });
    ended.abort(WAIT_OVER); // drop the waits that did not fire, and their timers
    stopWaiting = undefined;
  }

  async function run(): Promise<void> {
    // CRITICAL or HIGH committed while a step runs: the urgent lane claims it now rather than
    // after that step. An idle loop is woken by the same notify and claims it in its next step,
    // unless its steps leave those to the lane (urgentInLane): then the lane claims it, idle or not.
    const stopUrgent = wakeup.onUrgent(() => {
      if (running && (scheduler.urgentInLane || stopWaiting === undefined)) scheduler.claimUrgent();
    });
    try {
      await steps();
    } finally {
      stopUrgent();
    }
  }

  async function steps(): Promise<void> {
    while (running) {
      try {
        await scheduler.maintainLeases();
        const result = await scheduler.step(true);
        // A step that only ended rows (suppressed or expired) moved the queue too: more may be
        // ready behind them, so step again instead of waiting for the next wake-up.
        const moved = result.claimed.length + result.suppressed + result.expired + result.promoted;
        if (moved > 0 || scheduler.pendingForStep() > 0) {
          // Let sends that answer at once (the sandbox) finish, so the next step writes them.
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
      } catch (error) {
        log.error({ err: error }, 'scheduler step failed; retrying after the poll interval');
        await sleep(deps.pollMs);
        continue;
      }
      await idle();
    }
  }

  return {
    scheduler,
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    async stop(graceMs = 10_000) {
      running = false;
      wakeup.notify();
      stopWaiting?.();
      await loop;
      const finished = scheduler.drained();
      await within(finished, graceMs);
      if (scheduler.inFlight() > 0) {
        log.info({ inFlight: scheduler.inFlight() }, 'releasing sends still running at shutdown');
        scheduler.releaseAll();
        await within(finished, 2000);
      }
      // Whatever did not come back keeps its lease; the reaper of the next worker returns it.
      for (let i = 0; i < 3 && scheduler.pending() > 0; i++) {
        try {
          await scheduler.step(false);
        } catch (error) {
          log.error({ err: error }, 'writing completions at shutdown failed');
        }
      }
    },
  };
}

/**
 * Waits for `promise`, at most `ms`. The timer is cleared once the promise wins, so an idle
 * worker's process exits at once on SIGTERM instead of waiting out the grace period.
 */
async function within(promise: Promise<void>, ms: number): Promise<void> {
  const timeout = new AbortController();
  try {
    await Promise.race([promise, sleep(ms, undefined, { signal: timeout.signal }).catch(() => undefined)]);
  } finally {
    timeout.abort();
  }
}
