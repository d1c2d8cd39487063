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
export const URGENT_WINDOW_MS = 1000;

/** Whether urgent work arrived lately, and the chunk a step takes because of it. */
export interface UrgentWindow {
  /** `full`, or at most URGENT_CHUNK within URGENT_WINDOW_MS of an urgent wake-up. */
  chunk(full: number): number;
  /** Stops watching the wake-up. */
  stop(): void;
}

/** Watches `wakeup`'s urgent notifies (its `onUrgent`) on `clock`. */
export function watchUrgent(wakeup: Pick<Wakeup, 'onUrgent'>, clock: Clock): UrgentWindow {
  let urgentAt = Number.NEGATIVE_INFINITY;
  const stop = wakeup.onUrgent(() => {
    urgentAt = clock.now();
  });
  return {
    chunk: (full) => (clock.now() - urgentAt < URGENT_WINDOW_MS ? Math.min(full, URGENT_CHUNK) : full),
    stop,
  };
}
