import type { AttemptRecord, CallbackRecord, LeasedMessage } from './port/callbacks.ts';
import type { CallbackEvent, LoggedStatus } from './port/status-log.ts';
import { metadataOf } from './rows.ts';

/** A status-log row as both adapters select it (`cursor` is built by each adapter). */
export interface LoggedRow {
  notification_id: string;
  tenant: string;
  metadata: string | null;
  type: string;
  previous: string | null;
  at: number | string;
  attempt: number | null;
  provider: string | null;
  detail: string | null;
  source: string | null;
  locale: string | null;
  /** The recipient's JSON, read only for `inapp` notifications. */
  inbox_recipient: string | null;
  trace_context: string | null;
  /** A run's change: its workflow, version and recipient; null for a notification's event. */
  run_workflow: string | null;
  run_version: number | string | null;
  run_recipient: string | null;
}

/**
 * A workflow run's status change is a row of the status log (decision 0035) whose
 * notification_seq is the run's seq negated: notifications' seqs are positive, so the two never
 * meet, the log's (notification_seq, id) index keeps a run's changes together as it keeps a
 * notification's (the status before a change is read from it the same way), and the run's
 * event costs no column or index a notification's does not.
 */
export const runEventSeq = (runSeq: number): number => -runSeq;
/** The SQL test of a log row `e` being a run's change (see runEventSeq). */
export const IS_RUN_EVENT = 'e.notification_seq < 0';

/**
 * The log's joins, for both adapters: a row's notification, or its run. Each is one index look-up,
 * made only for the rows of its kind.
 */
export const LOG_JOINS = `LEFT JOIN notifications n ON e.notification_seq > 0 AND n.seq = e.notification_seq
  LEFT JOIN workflow_runs r ON ${IS_RUN_EVENT} AND r.seq = -e.notification_seq`;

/** The `{ id }` recipient of an `inapp` notification, as the log row carries it. */
function inboxRecipientOf(json: string | null): string | null {
  if (json === null) return null;
  const id = (JSON.parse(json) as { id?: unknown }).id;
  return typeof id === 'string' ? id : null;
}

export function loggedFromRow(row: LoggedRow, cursor: string): LoggedStatus {
  return {
    cursor,
    notificationId: row.notification_id,
    tenant: row.tenant,
    metadata: metadataOf(row.metadata),
    type: row.type as LoggedStatus['type'],
    previous: row.previous as LoggedStatus['previous'],
    run:
      row.run_workflow === null
        ? null
        : {
            workflow: row.run_workflow,
            version: Number(row.run_version),
            recipientId: row.run_recipient as string,
          },
    at: Number(row.at),
    attempt: row.attempt,
    provider: row.provider,
    detail: row.detail,
    source: row.source,
    locale: row.locale,
    inboxRecipient: inboxRecipientOf(row.inbox_recipient),
    traceContext: row.trace_context ?? null,
  };
}

/**
 * The columns of a log query (over LOG_JOINS): the event, its notification or run, and the status
 * before it (every event of a run is a status; a notification's are those of `statusTypes`).
 */
export function loggedColumns(statusTypes: string): string {
  return `coalesce(n.id, r.id) AS notification_id, coalesce(n.tenant, r.tenant) AS tenant, n.metadata, n.trace_context,
    CASE WHEN n.channel = 'inapp' THEN n.recipient END AS inbox_recipient, e.type, e.at, e.attempt, e.provider, e.detail, e.source, e.locale,
    r.workflow_key AS run_workflow, r.version AS run_version, r.recipient_id AS run_recipient,
    (SELECT p.type FROM notification_events p WHERE p.notification_seq = e.notification_seq AND p.id < e.id
       AND (${IS_RUN_EVENT} OR p.type IN (${statusTypes})) ORDER BY p.id DESC LIMIT 1) AS previous`;
}

/** A callbacks row as both adapters read it. */
export interface CallbackRow {
  id: string;
  tenant: string;
  url: string;
  events: string;
  secret: string;
  previous_secret: string | null;
  rotated_at: number | string | null;
  disabled_at: number | string | null;
  disabled_reason: string | null;
  created_at: number | string;
}

const numberOrNull = (v: number | string | null) => (v === null ? null : Number(v));

export function callbackFromRow(row: CallbackRow): CallbackRecord {
  return {
    id: row.id,
    tenant: row.tenant,
    url: row.url,
    events: JSON.parse(row.events) as CallbackEvent[],
    secret: row.secret,
    previousSecret: row.previous_secret,
    rotatedAt: numberOrNull(row.rotated_at),
    disabledAt: numberOrNull(row.disabled_at),
    disabledReason: row.disabled_reason,
    createdAt: Number(row.created_at),
  };
}

/** A callback_messages row as a claim returns it. */
export interface LeasedRow {
  id: string;
  callback_id: string;
  notification_id: string;
  body: string;
  attempts: number;
  created_at: number | string;
  trace_context: string | null;
}

export const leasedFromRow = (row: LeasedRow): LeasedMessage => ({
  id: row.id,
  callbackId: row.callback_id,
  notificationId: row.notification_id,
  body: row.body,
  attempt: row.attempts,
  createdAt: Number(row.created_at),
  ...(row.trace_context === null ? {} : { traceContext: row.trace_context }),
});

/** A callback_attempts row. */
export interface AttemptRow {
  id: number;
  message_id: string;
  notification_id: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  at: number;
}

export const attemptFromRow = (row: AttemptRow): AttemptRecord => ({
  seq: Number(row.id),
  messageId: row.message_id,
  notificationId: row.notification_id,
  attempt: row.attempt,
  statusCode: row.status_code,
  error: row.error,
  at: Number(row.at),
});
