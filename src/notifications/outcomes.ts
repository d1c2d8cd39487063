/**
 * The delivery history (GET /admin/history, the dashboard's charts): how many notifications of
 * each tenant and channel ended delivered, failed or skipped, counted per minute and per hour in
 * the database by whichever process completed them (decision 0013). Which transition counts as
 * which outcome is decided with the transition, in status.ts; this file says how they are bucketed
 * and kept.
 *
 * The names are the contract's statuses: `DELIVERED` counts a provider's acceptance (`SENT`, or
 * `SENT` then `DELIVERED` at once), once, when the worker's attempt ends; a delivery report that
 * follows changes no count. `FAILED` counts a permanent error or the last attempt used up.
 * `SKIPPED` counts a notification not sent on purpose: one that ended `SKIPPED` (a person deleted,
 * with no address for the channel, or opted out: docs/sending-to-people.md), and one whose recipient is
 * suppressed (the row's status says `FAILED`, as §11 wants, with the suppression as its event's
 * source).
 * Cancelled and expired notifications are not counted.
 */
export const OUTCOMES = ['DELIVERED', 'FAILED', 'SKIPPED'] as const;
export type Outcome = (typeof OUTCOMES)[number];

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/**
 * The windows the history answers: `buckets` buckets of `spanMs` each, the last one the bucket
 * in progress. Each window has a span of its own, counted apart, so a 7-day read sums 168 hour
 * rows per key, not 10,080 minute rows.
 */
export const HISTORY_WINDOWS = {
  '1h': { spanMs: MINUTE_MS, buckets: 60 },
  '7d': { spanMs: HOUR_MS, buckets: 7 * 24 },
} as const;
export type HistoryWindow = keyof typeof HISTORY_WINDOWS;

/** The bucket spans every completion is counted in, one per window. */
export const HISTORY_SPANS: readonly number[] = Object.values(HISTORY_WINDOWS).map((w) => w.spanMs);

/** The start of the bucket of `spanMs` that holds `at` (ms since the epoch, UTC). */
export const bucketStart = (at: number, spanMs: number): number => at - (at % spanMs);

/** The start of a window's oldest bucket at `now`: the history reads from here on. */
export function windowStart(window: HistoryWindow, now: number): number {
  const { spanMs, buckets } = HISTORY_WINDOWS[window];
  return bucketStart(now, spanMs) - (buckets - 1) * spanMs;
}

/**
 * Rows of a span whose bucket starts before this are past every window that reads them: pruned.
 * One bucket of slack, so that a reader whose clock is a little behind the writer's still finds
 * its oldest bucket whole.
 */
export function pruneBefore(spanMs: number, now: number): number {
  const window = Object.values(HISTORY_WINDOWS).find((w) => w.spanMs === spanMs);
  if (!window) throw new TypeError(`no history window counts buckets of ${spanMs} ms`);
  return bucketStart(now, spanMs) - window.buckets * spanMs;
}

/**
 * When a writer of the history prunes: at most once a minute (each writer keeps its own), in
 * the transaction of a cycle that counts something. A bucket then outlives its window by a
 * minute at most, and a prune finds a handful of rows: no job of its own is needed.
 */
export function pruneSchedule(): (now: number) => boolean {
  let next = Number.NEGATIVE_INFINITY;
  return (now) => {
    if (now < next) return false;
    next = now + MINUTE_MS;
    return true;
  };
}
