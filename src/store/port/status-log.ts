import {
  INBOX_COUNTS,
  INBOX_EVENT_TYPES,
  type InboxCountsType,
  type InboxEventType,
  STATUSES,
  type Status,
} from '../../notifications/model.ts';

/**
 * The status log (docs/callbacks.md): every status event of every notification, in commit order,
 * read by the live streams and by the callback sender. It is the notification_events table
 * itself (a status change and its event are committed together), read with an opaque cursor
 * that each adapter makes gap-free for its database.
 */
export interface StatusLogStore {
  /** The cursor of the latest change committed so far: reading after it gives only new ones. */
  head(): Promise<string>;
  /** Whether `cursor` is one this adapter hands out (a Last-Event-ID from a client). */
  isCursor(cursor: string): boolean;
  /** Log order of two cursors: negative when `a` comes first, 0 when equal. */
  compare(a: string, b: string): number;
  /**
   * Status events after `after`, oldest first, at most `limit`. One read looks at no more than
   * LOG_SCAN_PAGES × `limit` events of the log, whatever the filters, so that its cost is bounded
   * however few of them match (a tenant catching up behind another's million changes reads them
   * some thousands at a time, not in one statement); `readTo` says how far it got. With `until`,
   * none after it. With `since` (epoch ms), none older than it, and a cursor older than that
   * first moves ahead to the log's events of about that time (TIME_SKEW_MS before it, found by
   * seekTime in store/seek-time.ts): a client's Last-Event-ID of last month does not read a month
   * of the log. With `types` or `tenants`, only events to those statuses or of those tenants'
   * notifications.
   */
  read(after: string, options: LogReadOptions): Promise<LogPage>;
}

export interface LogReadOptions {
  until?: string;
  since?: number;
  /** Events returned at most. */
  limit: number;
  types?: readonly LoggedType[];
  tenants?: readonly string[];
}

/** What one read of the log gives. */
export interface LogPage {
  /** The events that match, oldest first. */
  rows: LoggedStatus[];
  /** How far the log was read: the next read starts after it. */
  readTo: string;
  /** The read stopped at a limit: there may be more before `until` (or the end). */
  more: boolean;
}

/** Events of the log one read looks at, at most, per event it may return. */
export const LOG_SCAN_PAGES = 8;

/**
 * The page of a read that found `limit` events: it ends at its last (there may be more), whatever
 * it looked at. Undefined for a shorter page, which got through what it looked at.
 */
export const fullPage = (rows: LoggedStatus[], limit: number): LogPage | undefined =>
  rows.length === limit ? { rows, readTo: (rows.at(-1) as LoggedStatus).cursor, more: true } : undefined;

/** One status event of the log, with what a callback or a stream needs about its notification. */
export interface LoggedStatus {
  /** Its place in the log, opaque: the SSE event id and a callback's progress. */
  cursor: string;
  notificationId: string;
  tenant: string;
  metadata: unknown;
  /** The status it moved to, or what the reader of an inbox message did. */
  type: LoggedType | InboxCountsType;
  /** The status of the notification's previous status event; null when this is its first. */
  previous: Status | null;
  at: number;
  attempt: number | null;
  provider: string | null;
  detail: string | null;
  source: string | null;
  /** On SENT: the locale variant rendered (docs/localization.md). */
  locale: string | null;
  /**
   * The recipientId of an `inapp` notification (its recipient is always `{ id }`), null on every
   * other channel: the inbox streams find the streams an event goes to by it (inbox/hub.ts).
   */
  inboxRecipient: string | null;
  /** The notification's stored `traceparent` (docs/tracing.md): its callbacks' requests carry it. */
  traceContext: string | null;
}

/** The statuses, as an SQL list for both adapters' queries (an event's previous status). */
export const STATUS_TYPES_SQL = STATUSES.map((t) => `'${t}'`).join(', ');

/**
 * What the log reports: a change of status, or what the reader of an `inapp` message did
 * (SEEN, READ, ARCHIVED: the status stays DELIVERED; docs/inbox.md). LOGGED_TYPES are those a
 * callback may ask for.
 */
export type LoggedType = Status | InboxEventType;
export const LOGGED_TYPES: readonly LoggedType[] = [...STATUSES, ...INBOX_EVENT_TYPES];
/**
 * The event types the log's reads give: LOGGED_TYPES and INBOX_COUNTS, which only the inbox
 * streams act on (changes.ts reports no change for it), as an SQL list for both adapters.
 */
export const LOGGED_TYPES_SQL = [...LOGGED_TYPES, INBOX_COUNTS].map((t) => `'${t}'`).join(', ');
