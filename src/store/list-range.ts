import type { NotificationFilter } from './port/notifications.ts';
import { type FirstAfter, seekTime, TIME_SKEW_MS } from './seek-time.ts';

/** The part of a tenant's acceptance order a list read covers: `seq` < `below` and > `above`. */
export interface SeqRange {
  below?: number;
  above?: number;
}

/**
 * The range of a list read: its cursor, narrowed by `createdBefore` and `createdAfter` to where
 * notifications of those times are (seekTime on the tenant's acceptance order, which follows
 * acceptance time within TIME_SKEW_MS; the times are still checked row by row). `firstAfter(k)`
 * gives the tenant's first notification after `seq` k, with its `created_at`, and `last` the
 * tenant's newest `seq`.
 */
export async function listRange(
  filter: NotificationFilter,
  firstAfter: FirstAfter,
  last: () => Promise<number | undefined>,
): Promise<SeqRange> {
  const range: SeqRange = { below: filter.beforeSeq };
  if (filter.createdBefore === undefined && filter.createdAfter === undefined) return range;
  const newest = await last();
  if (newest === undefined) return range;
  const first = await firstAfter(0n);
  /** The least seq after which every notification is at least `time` old (0: all are). */
  const seek = async (time: number) => {
    if (first === undefined || first.at >= time) return 0;
    return Number(await seekTime(0n, BigInt(newest), time, firstAfter));
  };
  if (filter.createdBefore !== undefined) {
    // After it, every one is too new.
    const k = (await seek(filter.createdBefore + TIME_SKEW_MS)) + 1;
    range.below = range.below === undefined ? k : Math.min(range.below, k);
  }
  if (filter.createdAfter !== undefined) {
    // Up to it, every one is too old.
    range.above = await seek(filter.createdAfter - TIME_SKEW_MS);
  }
  return range;
}

/**
 * Whether a list read filters beyond its range, and so looks at LIST_SCAN of the tenant's
 * notifications at most (without a filter every one it looks at is an item).
 */
export const filtersRows = (f: NotificationFilter): boolean =>
  f.status !== undefined ||
  f.priority !== undefined ||
  f.channel !== undefined ||
  f.createdAfter !== undefined ||
  f.createdBefore !== undefined;
