import { STATUSES, type Status } from '../../notifications/model.ts';

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
   * Status events after `after`, oldest first, at most `limit`; with `until`, none after it, and
   * with `since`, none older than it (epoch ms). With `types` or `tenants`, only events to those
   * statuses or of those tenants' notifications (the others are skipped in the database).
   */
  read(after: string, options: LogReadOptions): Promise<LoggedStatus[]>;
}

export interface LogReadOptions {
  until?: string;
  since?: number;
  limit: number;
  types?: readonly Status[];
  tenants?: readonly string[];
}

/** One status event of the log, with what a callback or a stream needs about its notification. */
export interface LoggedStatus {
  /** Its place in the log, opaque: the SSE event id and a callback's progress. */
  cursor: string;
  notificationId: string;
  tenant: string;
  metadata: unknown;
  /** The status it moved to. */
  type: Status;
  /** The status of the notification's previous status event; null when this is its first. */
  previous: Status | null;
  at: number;
  attempt: number | null;
  provider: string | null;
  detail: string | null;
  source: string | null;
}

/** The event types the log holds, the statuses, as an SQL list for both adapters' queries. */
export const STATUS_TYPES_SQL = STATUSES.map((t) => `'${t}'`).join(', ');
