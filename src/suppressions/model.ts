import { iso } from '../clock.ts';
import type { Channel, Priority, Recipient } from '../notifications/model.ts';

/**
 * Herald's own names for why it suppressed a recipient: `bounce`, `complaint`, `unregistered` and
 * `opt_out` come from providers' answers and webhooks, `unsubscribe` from the one-click link,
 * `manual` from an admin who gave no reason of their own.
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

/** The longest reason an admin may give in their own words (free text), in characters: docs/deliverability.md. */
export const REASON_MAX_LENGTH = 200;

const OWN_REASONS: ReadonlySet<string> = new Set(SUPPRESSION_REASONS);

/** Whether the text holds a C0 control character or DEL: a line break, a tab, U+0000 … */
const hasControl = (text: string) =>
  Array.from(text).some((c) => {
    const code = c.charCodeAt(0);
    return code < 0x20 || code === 0x7f;
  });

/**
 * What is wrong with a reason an admin gives (its length is the schema's), or undefined. One line
 * of text: it is shown in a table and quoted in an event's detail; and not blank.
 */
export function reasonProblem(reason: string): string | undefined {
  if (hasControl(reason)) return 'must be one line, without control characters (line breaks, tabs)';
  if (reason.trim() === '') return 'must NOT be blank';
  return undefined;
}

/** One suppressed recipient of a tenant on a channel; `recipient` is its key (suppressionKey). */
export interface Suppression {
  tenant: string;
  channel: Channel;
  recipient: string;
  /** One of Herald's own names (SuppressionReason), or an admin's own words. */
  reason: string;
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
 * from bulk mail, so it stops LOW only. An admin's own words stop what `manual` stops, unless
 * they are `unsubscribe` itself (which admins could give before reasons were free text).
 */
export function blocks(reason: string, priority: Priority): boolean {
  if (priority === 'CRITICAL') return false;
  return reason !== 'unsubscribe' || priority === 'LOW';
}

/**
 * The FAILED event's detail of a notification a suppression stopped. An admin's own words are
 * quoted, so they read as theirs and cannot pass for the rest of the sentence.
 */
export function suppressedDetail(reason: string, since: number): string {
  const named = OWN_REASONS.has(reason) ? reason : JSON.stringify(reason);
  return `recipient suppressed (${named} since ${iso(since)}): no provider call; remove the suppression to send again`;
}
