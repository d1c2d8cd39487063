/** Domain types of a notification, shared by the API, the scheduler and the store adapters. */

import type { Channel, Content } from '../channels.ts';

export { CHANNELS, type Channel, type Content } from '../channels.ts';

/** In claim order: index 0 is claimed first. Stored as that index. */
export const PRIORITIES = ['CRITICAL', 'HIGH', 'NORMAL', 'LOW'] as const;
export type Priority = (typeof PRIORITIES)[number];

export const STATUSES = [
  'QUEUED',
  'PROCESSING',
  'SENT',
  'DELIVERED',
  'RETRYING',
  'FAILED',
  'CANCELLED',
  'EXPIRED',
  'SKIPPED',
] as const;
export type Status = (typeof STATUSES)[number];

export const TERMINAL_STATUSES: ReadonlySet<Status> = new Set([
  'DELIVERED',
  'FAILED',
  'CANCELLED',
  'EXPIRED',
  'SKIPPED',
]);

/** What the reader of an `inapp` message did (docs/inbox.md): events, not statuses. */
export const INBOX_EVENT_TYPES = ['SEEN', 'READ', 'ARCHIVED'] as const;
export type InboxEventType = (typeof INBOX_EVENT_TYPES)[number];

export const isInboxEvent = (type: string): type is InboxEventType =>
  (INBOX_EVENT_TYPES as readonly string[]).includes(type);

/**
 * The log entry of an `unread` or `unarchive` that changed a message (docs/inbox.md): the contract
 * has no event for them, so nothing reports it (the status stream, callbacks and GET
 * /notifications/{id} leave it out); it is logged only so that every process's inbox streams of the
 * recipient get the new counts, as they do after SEEN, READ and ARCHIVED.
 */
export const INBOX_COUNTS = 'INBOX_COUNTS';
export type InboxCountsType = typeof INBOX_COUNTS;

/** Besides the statuses: what providers, pauses and an inbox's reader add. */
const EVENT_TYPES = [...STATUSES, 'ATTEMPT_FAILED', 'THROTTLED', 'WEBHOOK', ...INBOX_EVENT_TYPES] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export function priorityRank(priority: Priority): number {
  return PRIORITIES.indexOf(priority);
}

export function priorityOf(rank: number): Priority {
  const priority = PRIORITIES[rank];
  if (!priority) throw new TypeError(`no priority with rank ${rank}`);
  return priority;
}

/**
 * A recipient as accepted; which field is set depends on the channel. `id` names one of the
 * tenant's recipients (docs/sending-to-people.md), whose address is read when the notification is processed.
 */
export interface Recipient {
  id?: string;
  email?: string;
  phone?: string;
  subscription?: { endpoint: string; keys: { p256dh: string; auth: string }; expirationTime?: number | null };
  deviceToken?: string;
  platform?: 'apns' | 'fcm';
}

/**
 * A notification's recipient as resolved when it is processed (docs/sending-to-people.md), from the profile its
 * `{ id }` names: what its templates see as `recipient`, and on push every target of the profile
 * that no suppression stops (`recipient` is then the first of them).
 */
export interface Person {
  id: string;
  name: string | null;
  locale: string | null;
  timezone: string | null;
  data: Record<string, unknown>;
  targets?: Recipient[];
}

/** A notification as stored. Times are epoch milliseconds. */
export interface NotificationRecord {
  seq: number;
  id: string;
  tenant: string;
  channel: Channel;
  priority: Priority;
  status: Status;
  recipient: Recipient;
  templateKey: string | null;
  templateVersion: number | null;
  /** Its own locale (a canonical BCP 47 tag, docs/localization.md), or null: its recipient's, or none. */
  locale: string | null;
  content: Content | null;
  variables: Record<string, unknown>;
  metadata: Record<string, unknown>;
  /** The notification's category (docs/sending-to-people.md), or null. */
  category: string | null;
  /**
   * Set on a claimed notification to a person: the profile it was resolved to in the claim's
   * transaction (`recipient` then holds the resolved address). Never stored.
   */
  person?: Person;
  scheduledAt: number | null;
  expiresAt: number | null;
  attempts: number;
  /** Consecutive times it was claimed and given back without a provider call (holds). */
  holds: number;
  nextAttemptAt: number | null;
  provider: string | null;
  providerMessageId: string | null;
  createdAt: number;
  updatedAt: number;
  /** The broadcast that made it (docs/sending-to-people.md); absent for one accepted on its own. */
  broadcastId?: string;
  /** The `traceparent` stored at acceptance (docs/tracing.md); absent when it was not traced. Never shown. */
  traceContext?: string;
}

/** One entry of a notification's event list, in order. */
export interface EventRecord {
  type: EventType;
  at: number;
  attempt?: number;
  provider?: string;
  detail?: string;
  source?: string;
  /** On SENT: the locale variant the message was rendered from (absent: the template itself). */
  locale?: string;
}
