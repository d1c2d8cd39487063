import { changeOf } from '../notifications/changes.ts';
import type { CallbackRecord, LeasedMessage } from '../store/port/callbacks.ts';
import type { LoggedStatus } from '../store/port/status-log.ts';
import { messageId } from './signing.ts';

/** A callback's message for one status change, with its place in the status log. */
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
    // A callback's events are LOGGED_TYPES: INBOX_COUNTS, for the inbox streams alone, is never among them.
    if (!(callback.events as readonly string[]).includes(row.type)) continue;
    let body = bodies.get(row);
    if (body === undefined) {
      const change = changeOf(row);
      body = change
        ? JSON.stringify({ type: 'notification.status', timestamp: change.event.at, data: change })
        : null;
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
