import {
  INBOX_COUNTS,
  INBOX_EVENT_TYPES,
  type InboxCountsType,
  type InboxEventType,
  STATUSES,
  type Status,
} from '../../notifications/model.ts';
import type { RunStatus } from '../../workflows/model.ts';

/**
 * The status log (docs/callbacks.md): every status event of every notification, and every status
 * change of a workflow run (decision 0035), in commit order, read by the live streams and by the
 * callback sender. It is the notification_events table itself (a status change and its event are
 * committed together), read with an opaque cursor that each adapter makes gap-free for its
 * database.
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
   * of the log. With `types` or `tenants`, only events to those statuses (and runs' changes when
   * `types` has RUN_CHANGE) or of those tenants' notifications and runs.
   */
  read(after: string, options: LogReadOptions): Promise<LogPage>;
}

export interface LogReadOptions {
  until?: string;
  since?: number;
  /** Events returned at most. */
  limit: number;
  types?: readonly CallbackEvent[];
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

/**
 * One status event of the log, with what a callback or a stream needs about its notification, or
 * one status change of a workflow run (`run` set).
 */
export interface LoggedStatus {
  /** Its place in the log, opaque: the SSE event id and a callback's progress. */
  cursor: string;
  /**
   * The notification's id; for a run's change, the run's id (made by the same generator, so a
   * callback orders a run's messages by it as it orders a notification's).
   */
  notificationId: string;
  tenant: string;
  metadata: unknown;
  /** The status it moved to, or what the reader of an inbox message did; a run's new status. */
  type: LoggedType | InboxCountsType | RunStatus;
  /** The status of the notification's (or run's) previous status event; null when this is its first. */
  previous: Status | RunStatus | null;
  /** For a run's change: which run; null for a notification's event. */
  run: LoggedRun | null;
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

/** What a run's change carries besides its id (notificationId), status and time. */
export interface LoggedRun {
  workflow: string;
  version: number;
  recipientId: string;
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

/**
 * A workflow run's status change (decision 0035): the `type` of its callback message and the name
 * of its SSE event, and the entry of a callback's `events` that asks for them (run statuses are
 * not entries: a run's FAILED is not a notification's).
 */
export const RUN_CHANGE = 'workflow.run';
export type CallbackEvent = LoggedType | typeof RUN_CHANGE;
/** What a callback's `events` may list; the default (no list) is every status and RUN_CHANGE. */
export const CALLBACK_EVENTS: readonly CallbackEvent[] = [...LOGGED_TYPES, RUN_CHANGE];
export const DEFAULT_CALLBACK_EVENTS: readonly CallbackEvent[] = [...STATUSES, RUN_CHANGE];
