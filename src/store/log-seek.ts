/** The first event of the log after a place in it, by the key its order starts with. */
export type FirstAfter = (key: bigint) => Promise<{ key: bigint; at: number } | undefined>;

/**
 * Where a read of the log that wants nothing older than `time` may start: the least key `k` in
 * (`lo`, `hi`] such that the first event after `k` is at least `time` old, or there is none.
 * `lo` must be a key whose next event is older than `time`. A binary search on the log's order
 * (its ids on SQLite, its transaction numbers on PostgreSQL), which follows the events' times when
 * `time` has room for their skew (LOG_TIME_SKEW_MS): about 2 log₂(hi − lo) index lookups instead
 * of reading every event between.
 */
export async function seekTime(
  lo: bigint,
  hi: bigint,
  time: number,
  firstAfter: FirstAfter,
): Promise<bigint> {
  let low = lo;
  let high = hi;
  while (high - low > 1n) {
    const mid = low + (high - low) / 2n;
    const next = await firstAfter(mid);
    if (next === undefined || next.at >= time) high = mid;
    // Every key from mid up to the one before that event has it as its next event.
    else low = next.key - 1n > mid ? next.key - 1n : mid;
  }
  return high;
}
