import { reportOf } from '../notifications/changes.ts';
import type { CallbackRecord, LeasedMessage } from '../store/port/callbacks.ts';
import { type LoggedStatus, RUN_CHANGE } from '../store/port/status-log.ts';
import { messageId } from './signing.ts';

/**
 * A callback's message for one status change (a notification's or a run's), with its place in the
 * status log. A run's messages carry its id as `notificationId`, which orders them as a
 * notification's (the head holds a later one behind an unsettled earlier one).
 */
export interface LogMessage {
  cursor: string;
  message: LeasedMessage;
}

/**
 * The messages a page of the status log makes for one callback: its tenant's changes to the
 * statuses it reports, made after it was created. Each body (`{ type, timestamp, data }`) is
 * fixed here; a message that waits for a retry keeps it. The body is the same for every callback
 * that reports the change: `bodies`, kept for one page, makes it once for all of them (a tenant's
 * 20 callbacks made each body 20 times).
 */
export function messagesFor(
  callback: CallbackRecord,
  rows: readonly LoggedStatus[],
  bodies = new Map<LoggedStatus, string | null>(),
): LogMessage[] {
  const messages: LogMessage[] = [];
  for (const row of rows) {
    if (row.tenant !== callback.tenant || row.at < callback.createdAt) continue;
    // A callback's events are CALLBACK_EVENTS: INBOX_COUNTS, for the inbox streams alone, is never
    // among them; a run's change is asked for by RUN_CHANGE, never by its status.
    if (!(callback.events as readonly string[]).includes(row.run ? RUN_CHANGE : row.type)) continue;
    let body = bodies.get(row);
    if (body === undefined) {
      const report = reportOf(row);
      body = report && JSON.stringify(report);
      bodies.set(row, body);
    }
    if (body === null) continue;
    messages.push({
      cursor: row.cursor,
      message: {
        id: messageId(callback.id, row.cursor),
        callbackId: callback.id,
        notificationId: row.notificationId,
        body,
        attempt: 1,
        createdAt: row.at,
        ...(row.traceContext === null ? {} : { traceContext: row.traceContext }),
      },
    });
  }
  return messages;
}
