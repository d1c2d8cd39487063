import type { DeliveryReport } from '../../notifications/reports.ts';

/** What one delivery report did to its notification. */
export type ReportOutcome =
  /** The status moved forward (an event of the new status was appended). */
  | 'applied'
  /** The report was valid but moved nothing (repeated, late, or not a status change): a WEBHOOK event. */
  | 'unchanged'
  /** No notification carries that provider message id yet: the report is kept until one does. */
  | 'pending';

/**
 * Delivery reports from provider webhooks and SMPP receipts, matched by (provider, provider
 * message id). Status only moves forward (canMove); every report leaves an event.
 */
export interface ReportStore {
  /** Applies one report at time `now` (epoch ms), or keeps it pending when the id is unknown yet. */
  apply(report: DeliveryReport, now: number): Promise<ReportOutcome>;
  /**
   * Applies the reports kept for these message ids, oldest first, and forgets them. The scheduler
   * calls it right after it records provider message ids on completed sends. Returns how many
   * reports were applied.
   */
  applyPending(provider: string, providerMessageIds: readonly string[], now: number): Promise<number>;
  /** Drops pending reports received before `before` (ids that will never be recorded). */
  purgePending(before: number): Promise<number>;
}
