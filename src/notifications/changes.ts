import { type Static, Type } from '@sinclair/typebox';
import { literals } from '../http/schema.ts';
import type { LoggedStatus } from '../store/port/status-log.ts';
import { eventFromRow } from '../store/rows.ts';
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
 * The change a logged event reports, or null when it changes nothing a client sees: a
 * claim after a hold (a rate limit or an open circuit gave the notification back before any
 * provider call, without a status event) logs PROCESSING again after PROCESSING. INBOX_COUNTS
 * (an unread or unarchive) is for the inbox streams alone: no change.
 */
export function changeOf(logged: LoggedStatus): StatusChange | null {
  if (logged.type === INBOX_COUNTS) return null;
  // Acceptance (QUEUED) is the 201 itself and is not logged, so a first status event follows it.
  const previousStatus: Status = logged.previous ?? 'QUEUED';
  // What an inbox message's reader did (SEEN, READ, ARCHIVED) leaves the status as it was
  // (DELIVERED): reported with the status unchanged and the event saying what happened.
  const status = isInboxEvent(logged.type) ? previousStatus : logged.type;
  if (status === logged.type && previousStatus === status) return null;
  return {
    notificationId: logged.notificationId,
    status,
    previousStatus,
    event: eventView(eventFromRow(logged)),
    metadata: logged.metadata,
  };
}
