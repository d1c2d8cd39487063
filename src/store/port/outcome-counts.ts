import type { Channel } from '../../channels.ts';
import type { Outcome } from '../../notifications/outcomes.ts';

/** Notifications of one tenant and channel that ended with one outcome (a cycle's tally). */
export interface OutcomeCount {
  tenant: string;
  channel: Channel;
  outcome: Outcome;
  n: number;
}

/** One bucket's count of one channel and outcome, summed over the tenants and writers read. */
export interface OutcomeBucket {
  /** The bucket's start, ms since the epoch. */
  bucket: number;
  channel: Channel;
  outcome: Outcome;
  n: number;
}

/**
 * The delivery history's counters (src/notifications/outcomes.ts). They are written by the queue's
 * cycle, in the transaction of the completions they count (QueueDriver.countOutcomes), so every
 * process's work lands in the same rows' sums; this reads them.
 */
export interface OutcomeCountStore {
  /**
   * The buckets of `spanMs` from `since` on that count anything, of one tenant or (without
   * `tenant`) of every tenant, in bucket order.
   */
  read(query: { spanMs: number; since: number; tenant?: string }): Promise<OutcomeBucket[]>;
}
