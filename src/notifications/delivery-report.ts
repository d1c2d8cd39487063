import { createHash } from 'node:crypto';
import type { SuppressionReason } from '../suppressions/model.ts';

/** A delivery report from a provider (webhook or SMPP receipt), matched by the provider's message id. */
export interface DeliveryReport {
  provider: string;
  providerMessageId: string;
  outcome: 'DELIVERED' | 'FAILED' | 'SENT';
  detail?: string;
  /** When the provider says it happened, epoch ms. */
  at: number;
  source: 'webhook' | 'receipt';
  /**
   * What identifies this report at its provider when `at` is not the provider's own time of it
   * (a Twilio status has none): the event and what else tells it apart. By default a report is
   * told apart by what it says and when the provider says it happened.
   */
  identity?: string;
  /** What the report says about the recipient for good (a hard bounce, a complaint, an opt-out). */
  suppress?: SuppressionReason;
}

/**
 * The identity of a report for its notification: the same report delivered again (a provider's
 * retry, a replay) leaves one event and is applied once (README, "Delivery reports").
 */
export function reportKey(report: DeliveryReport): string {
  if (report.identity !== undefined) return report.identity.slice(0, 200);
  const said = `${report.outcome}\u0000${report.at}\u0000${report.detail ?? ''}`;
  return createHash('sha256').update(said).digest('base64url');
}

/**
 * A provider's fallback is named `<primary>-fallback` (SMTP_FALLBACK_URL's is `smtp-fallback`):
 * the relays' webhooks (SendGrid, Mailgun) report for the channel's SMTP providers under the
 * primary's name, so a report is matched against both.
 */
export const FALLBACK_SUFFIX = '-fallback';

/** The provider names a report of `provider` may be matched to. */
export function matchedProviders(provider: string): [string, string] {
  return [provider, `${provider}${FALLBACK_SUFFIX}`];
}

/** The name reports of `provider` arrive under (its primary's, for a fallback). */
export function reportingName(provider: string): string {
  return provider.endsWith(FALLBACK_SUFFIX) ? provider.slice(0, -FALLBACK_SUFFIX.length) : provider;
}
