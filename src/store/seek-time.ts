/** The first row after a key, in an order that follows time: its key and its time. */
export type FirstAfter = (key: bigint) => Promise<{ key: bigint; at: number } | undefined>;

/**
 * The least key `k` in (`lo`, `hi`] such that the first row after `k` is at least `time` old, or
 * there is none; `lo` must be a key whose next row is older than `time`. A binary search on an
 * order that follows the rows' times when `time` has room for their skew: the status log's ids
 * (SQLite) and transaction numbers (PostgreSQL), a tenant's notifications by acceptance order.
 * About 2 log₂(hi − lo) index lookups instead of reading every row between.
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
    // Every key from mid up to the one before that row has it as its next row.
    else low = next.key - 1n > mid ? next.key - 1n : mid;
  }
  return high;
}

/**
 * How far a row's time may be behind the time of a row before it in such an order (the clocks of
 * several processes; a group commit's rows accepted in another order than they were written): a
 * search for `time` looks for `time` less this.
 */
export const TIME_SKEW_MS = 10 * 60 * 1000;
