import type { DeliveryReport } from '../../notifications/delivery-report.ts';

/** What one delivery report did to its notification. */
export type ReportOutcome =
  /** The status moved forward (an event of the new status was appended). */
  | 'applied'
  /** The report was valid but moved nothing (repeated, late, or not a status change): a WEBHOOK event. */
  | 'unchanged'
  /** No notification carries that provider message id yet: the report is kept until one does. */
  | 'pending'
  /** The same report (same key) was already applied or kept: nothing changed. */
  | 'duplicate'
  /** Unmatched, and the provider already has its cap of pending reports: not kept. */
  | 'dropped';

/**
 * Delivery reports from provider webhooks and SMPP receipts, matched by (provider, provider
 * message id). Status only moves forward (canMove); every report leaves an event.
 */
export interface ReportStore {
  /**
   * Applies one report at time `now` (epoch ms) once per report key, or keeps it pending when the
   * id is unknown yet and `mayKeep` (the provider is under its cap of pending reports).
   */
  apply(report: DeliveryReport, now: number, mayKeep: boolean): Promise<ReportOutcome>;
  /** How many reports of this provider are pending. */
  pendingCount(provider: string): Promise<number>;
  /**
   * Records a provider's single-use token (a Mailgun signature token) seen at `now`; false when
   * it was seen already. Tokens seen before `forgetBefore` are forgotten.
   */
  useToken(provider: string, token: string, now: number, forgetBefore: number): Promise<boolean>;
  /** Forgets a recorded token (its report could not be applied, so a retry must be accepted). */
  forgetToken(provider: string, token: string): Promise<void>;
  /**
   * Applies the reports kept for these message ids, oldest first, and forgets them. The scheduler
   * calls it right after it records provider message ids on completed sends. Returns how many
   * reports were applied.
   */
  applyPending(provider: string, providerMessageIds: readonly string[], now: number): Promise<number>;
  /** Drops pending reports received before `before` (ids that will never be recorded). */
  purgePending(before: number): Promise<number>;
}
