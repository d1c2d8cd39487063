import type { Clock } from '../clock.ts';
import type { Wakeup } from '../notifications/wakeup.ts';

/**
 * Rows a step of the worker's bulk loops (the broadcast fan-out, the workflow engine) takes at
 * most while urgent work arrives: within URGENT_WINDOW_MS of an urgent wake-up (a CRITICAL or
 * HIGH committed). Such a step is one transaction on the worker's thread, and on SQLite it holds
 * the one writer, so a CRITICAL committed or claimed meanwhile waits for the step under way:
 * short steps keep that wait short while urgent traffic comes in, and the full chunk, with its
 * rate, comes back once it stops (decision records 0036 and 0043).
 */
export const URGENT_CHUNK = 100;
/**
 * NORMAL and LOW notifications a claim step of the worker takes at most, each priority, while
 * urgent work arrives on a store with one writer (SQLite): the step, its sends and the
 * completions it writes next run on the thread that commits and claims the CRITICALs, one after
 * the other, so its length is what a CRITICAL waits for (decision record 0065).
 */
export const URGENT_STEP_CLAIMS = 16;
export const URGENT_WINDOW_MS = 1000;
/**
 * On a store shared by processes (PostgreSQL) a bulk step holds nothing a CRITICAL waits for, but
 * the database's CPU for its rows and the cores it runs on, which the CRITICAL's round trips need
 * (decision record 0062). Within the window such a step takes URGENT_SHARED_CHUNK rows at most and
 * is followed by URGENT_REST times its own time of nothing: the loop's share of the CPU, not the
 * step's length, is what counts there, and a chunk of URGENT_CHUNK spent that share on its round
 * trips (three transactions a step). Such a loop keeps at least 1 / (1 + URGENT_REST) of the rate
 * of these steps: it slows, never stops.
 */
export const URGENT_SHARED_CHUNK = 1000;
export const URGENT_REST = 3;

/** Whether urgent work arrived lately, and what a bulk step does because of it. */
export interface UrgentWindow {
  /** Within URGENT_WINDOW_MS of an urgent wake-up. */
  open(): boolean;
  /** `full`, or at most `short` (URGENT_CHUNK, or URGENT_SHARED_CHUNK on a shared store) while the window is open. */
  chunk(full: number, short?: number): number;
  /** Ms to rest after a step that took `stepMs`: URGENT_REST times it while the window is open, else 0. */
  rest(stepMs: number): number;
  /** Stops watching the wake-up. */
  stop(): void;
}

/** Watches `wakeup`'s urgent notifies (its `onUrgent`) on `clock`. */
export function watchUrgent(wakeup: Pick<Wakeup, 'onUrgent'>, clock: Clock): UrgentWindow {
  let urgentAt = Number.NEGATIVE_INFINITY;
  const stop = wakeup.onUrgent(() => {
    urgentAt = clock.now();
  });
  const open = () => clock.now() - urgentAt < URGENT_WINDOW_MS;
  return {
    open,
    chunk: (full, short = URGENT_CHUNK) => (open() ? Math.min(full, short) : full),
    rest: (stepMs) => (open() ? URGENT_REST * Math.max(0, stepMs) : 0),
    stop,
  };
}
