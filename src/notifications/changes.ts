import { type Static, Type } from '@sinclair/typebox';
import { iso } from '../clock.ts';
import { literals } from '../http/schema.ts';
import { type LoggedStatus, RUN_CHANGE } from '../store/port/status-log.ts';
import { eventFromRow } from '../store/rows.ts';
import { RUN_STATUSES, type RunStatus } from '../workflows/model.ts';
import { INBOX_COUNTS, isInboxEvent, STATUSES, type Status } from './model.ts';
import { NotificationEvent } from './schemas.ts';
import { eventView } from './view.ts';

/**
 * A status change as callbacks and the live stream report it (docs/callbacks.md): the `data` of a
 * callback body and of an SSE `status` event. Made here, once, from the status log.
 */
export const StatusChangeSchema = Type.Object(
  {
    notificationId: Type.String(),
    status: literals(STATUSES),
    previousStatus: literals(STATUSES),
    /** The event that made the change, as GET /notifications/{id} lists it. */
    event: NotificationEvent,
    metadata: Type.Unknown(),
  },
  { description: 'One status change of a notification' },
);
export type StatusChange = Static<typeof StatusChangeSchema>;

/**
 * A workflow run's status change as callbacks and the live stream report it (decision 0035): the
 * `data` of a `workflow.run` callback body and SSE event.
 */
export const RunChangeSchema = Type.Object(
  {
    runId: Type.String(),
    workflow: Type.String(),
    version: Type.Integer(),
    recipientId: Type.String(),
    status: literals(RUN_STATUSES),
    /** Null on a run's first change, its RUNNING when triggered. */
    previousStatus: Type.Union([literals(RUN_STATUSES), Type.Null()]),
    at: Type.String({ format: 'date-time' }),
  },
  { description: 'One status change of a workflow run' },
);
export type RunChange = Static<typeof RunChangeSchema>;

/**
 * The change a logged event reports, or null when it changes nothing a client sees: a
 * claim after a hold (a rate limit or an open circuit gave the notification back before any
 * provider call, without a status event) logs PROCESSING again after PROCESSING. INBOX_COUNTS
 * (an unread or unarchive) is for the inbox streams alone: no change. A run's change is not a
 * notification's: see runChangeOf.
 */
export function changeOf(logged: LoggedStatus): StatusChange | null {
  if (logged.type === INBOX_COUNTS || logged.run !== null) return null;
  // Acceptance (QUEUED) is the 201 itself and is not logged, so a first status event follows it.
  const previousStatus = (logged.previous as Status | null) ?? 'QUEUED';
  // What an inbox message's reader did (SEEN, READ, ARCHIVED) leaves the status as it was
  // (DELIVERED): reported with the status unchanged and the event saying what happened.
  const status = isInboxEvent(logged.type) ? previousStatus : (logged.type as Status);
  if (status === logged.type && previousStatus === status) return null;
  return {
    notificationId: logged.notificationId,
    status,
    previousStatus,
    event: eventView(eventFromRow(logged)),
    metadata: logged.metadata,
  };
}

/** The change a run's logged event reports; null for a notification's event. */
export function runChangeOf(logged: LoggedStatus): RunChange | null {
  if (logged.run === null) return null;
  return {
    runId: logged.notificationId,
    workflow: logged.run.workflow,
    version: logged.run.version,
    recipientId: logged.run.recipientId,
    status: logged.type as RunStatus,
    previousStatus: logged.previous as RunStatus | null,
    at: iso(logged.at),
  };
}

/** What callbacks and streams send for a logged event: its message type, timestamp and data. */
export type Report =
  | { type: 'notification.status'; timestamp: string; data: StatusChange }
  | { type: typeof RUN_CHANGE; timestamp: string; data: RunChange };

/** The report of a logged event, a notification's or a run's; null when it reports nothing. */
export function reportOf(logged: LoggedStatus): Report | null {
  const run = runChangeOf(logged);
  if (run) return { type: RUN_CHANGE, timestamp: run.at, data: run };
  const change = changeOf(logged);
  return change && { type: 'notification.status', timestamp: change.event.at, data: change };
}
