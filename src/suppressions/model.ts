import { iso } from '../clock.ts';
import type { Channel, Priority, Recipient } from '../notifications/model.ts';

/**
 * Why a recipient is suppressed. `bounce`, `complaint`, `unregistered` and `opt_out` come from
 * providers' answers and webhooks, `unsubscribe` from the one-click link, `manual` from an admin.
 */
export const SUPPRESSION_REASONS = [
  'bounce',
  'complaint',
  'unregistered',
  'opt_out',
  'unsubscribe',
  'manual',
] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

/** One suppressed recipient of a tenant on a channel; `recipient` is its key (suppressionKey). */
export interface Suppression {
  tenant: string;
  channel: Channel;
  recipient: string;
  reason: SuppressionReason;
}

/** A stored suppression, with when it was made. */
export interface SuppressionRecord extends Suppression {
  id: number;
  createdAt: number;
}

/**
 * The key a recipient is suppressed under: what identifies the mailbox, phone or push target,
 * whatever else the notification carried. Email addresses compare case-insensitively (what
 * mailbox providers do in practice), so they are lower-cased.
 */
export function suppressionKey(recipient: Recipient): string | undefined {
  if (recipient.email !== undefined) return recipient.email.trim().toLowerCase();
  if (recipient.phone !== undefined) return recipient.phone.trim();
  if (recipient.subscription !== undefined) return recipient.subscription.endpoint;
  if (recipient.deviceToken !== undefined) return recipient.deviceToken;
  return undefined;
}

/** The key of a recipient given as text (the API's and the unsubscribe link's): the same rule. */
export function keyOfText(channel: Channel, recipient: string): string {
  return channel === 'email' ? recipient.trim().toLowerCase() : recipient.trim();
}

/**
 * Whether a suppression stops a notification of this priority: CRITICAL is always attempted
 * (a password reset to an address that once bounced is worth the try), and an unsubscribe is
 * from bulk mail, so it stops LOW only.
 */
export function blocks(reason: SuppressionReason, priority: Priority): boolean {
  if (priority === 'CRITICAL') return false;
  return reason !== 'unsubscribe' || priority === 'LOW';
}

/** The FAILED event's detail of a notification a suppression stopped. */
export function suppressedDetail(reason: SuppressionReason, since: number): string {
  return `recipient suppressed (${reason} since ${iso(since)}): no provider call; remove the suppression to send again`;
}
