import { setTimeout as sleep, setImmediate as yieldTurn } from 'node:timers/promises';
import type { Clock } from '../clock.ts';
import { URGENT_CHUNK, URGENT_SHARED_CHUNK, watchUrgent } from '../dispatch/urgent-window.ts';
import { isUrgent, type Wakeup } from '../notifications/wakeup.ts';
import type { BroadcastStore } from '../store/port/broadcasts.ts';

/** The worker's fan-out of broadcasts (docs/topics.md). */
export interface FanOut {
  /** Stops taking steps; resolves once the step under way is committed or rolled back. */
  stop(): Promise<void>;
}

export interface FanOutDeps {
  broadcasts: BroadcastStore;
  clock: Clock;
  /**
   * The worker's wake-up: told after each chunk so the new notifications are claimed at once; its
   * urgent notifies (a CRITICAL or HIGH committed) shorten the steps, and on a shared store space
   * them out (`oneWriter`).
   */
  wakeup: Pick<Wakeup, 'notify' | 'onUrgent'>;
  /** Told after each chunk: new notifications (and cancels) are status changes. */
  onChanged?: () => void;
  /** How often an idle fan-out looks for a broadcast (HERALD_POLL_MS). */
  pollMs: number;
  log: { error(obj: object, msg: string): void };
  /** Rows a step makes at most, urgent work aside: FIXED.fanOutChunk for the store (one writer or not). */
  chunk: number;
  /**
   * The store has one writer (SQLite), which a step holds: steps are short while urgent work
   * arrives. On PostgreSQL a step holds nothing a CRITICAL waits for, but the database's CPU: while
   * urgent work arrives its ranges are shorter (URGENT_SHARED_CHUNK), made in turn with the other
   * workers' and each followed by a rest (URGENT_REST times the step's time), so the CRITICAL's
   * round trips find a core.
   */
  oneWriter: boolean;
}

/**
 * Runs broadcasts' fan-out beside the worker's claim loop, one step (one transaction of at most
 * `chunk` notifications) at a time, and yields the event loop after each, so the claim cycle, the
 * urgent lane and ingest's commits on the same thread (the SQLite writer) wait for one chunk at
 * most, never for a whole broadcast: the partition that keeps a CRITICAL ahead of a million LOW
 * being made. While urgent work arrives that chunk is shorter, and on a shared store the steps
 * take turns across workers and rest between them (urgent-window.ts in dispatch/). Idle, it looks
 * for work every `pollMs` on its own timer rather than on the worker's wake-up, whose one pending
 * signal it must not take from the claim loop.
 */
export function startFanOut(deps: FanOutDeps): FanOut {
  const { broadcasts, clock, log } = deps;
  const urgent = watchUrgent(deps.wakeup, clock);
  const shared = !deps.oneWriter;
  let running = true;
  // After a step that made or cancelled something, the next step goes without asking first.
  let busy = false;
  const idle = new AbortController();

  async function run(): Promise<void> {
    while (running) {
      try {
        const work = busy || (await broadcasts.hasWork());
        const started = clock.now();
        const chunk = urgent.chunk(deps.chunk, shared ? URGENT_SHARED_CHUNK : URGENT_CHUNK);
        const step = work ? await broadcasts.step(started, chunk, shared && urgent.open()) : null;
        busy = step !== null && !step.finished;
        if (step === null) {
          await sleep(deps.pollMs, undefined, { signal: idle.signal }).catch(() => undefined);
          continue;
        }
        if (step.made > 0 || step.cancelled > 0) {
          deps.wakeup.notify(step.made > 0 && isUrgent(step.priority));
          deps.onChanged?.();
        }
        const rest = shared ? urgent.rest(clock.now() - started) : 0;
        if (rest > 0) await sleep(rest, undefined, { signal: idle.signal }).catch(() => undefined);
        else await yieldTurn();
      } catch (error) {
        log.error({ err: error }, 'broadcast fan-out step failed; retrying after the poll interval');
        await sleep(deps.pollMs, undefined, { signal: idle.signal }).catch(() => undefined);
      }
    }
  }

  const loop = run();
  return {
    async stop() {
      running = false;
      idle.abort();
      urgent.stop();
      await loop;
    },
  };
}
