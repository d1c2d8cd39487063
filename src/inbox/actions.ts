import { INBOX_COUNTS, type InboxCountsType, type InboxEventType } from '../notifications/model.ts';
import type { InboxAction } from '../store/port/inbox.ts';

/**
 * What an action does to one inbox message (docs/inbox.md), decided once for both adapters:
 * `seen`, `read` and `archive` set their time when it is not set yet, each such change logging
 * the notification's SEEN, READ or ARCHIVED event; `read` marks the message seen too (logging SEEN
 * first when it was unseen). `unread` and `unarchive` clear a time and log only INBOX_COUNTS: the
 * contract has no event for them (nothing reports it), but every process's streams of the
 * recipient must hear that its counts changed.
 */

/** A message's marks: epoch milliseconds, or null when not set. */
export interface InboxMarks {
  seenAt: number | null;
  readAt: number | null;
  archivedAt: number | null;
}

/** The marks after `action` and the events it logs, in order; null when the message does not change. */
export function applyInboxAction(
  marks: InboxMarks,
  action: InboxAction,
  now: number,
): { marks: InboxMarks; events: Array<InboxEventType | InboxCountsType> } | null {
  switch (action) {
    case 'seen':
      return marks.seenAt === null ? { marks: { ...marks, seenAt: now }, events: ['SEEN'] } : null;
    case 'read':
      if (marks.readAt !== null) return null;
      return marks.seenAt === null
        ? { marks: { ...marks, seenAt: now, readAt: now }, events: ['SEEN', 'READ'] }
        : { marks: { ...marks, readAt: now }, events: ['READ'] };
    case 'unread':
      return marks.readAt === null ? null : { marks: { ...marks, readAt: null }, events: [INBOX_COUNTS] };
    case 'archive':
      return marks.archivedAt === null
        ? { marks: { ...marks, archivedAt: now }, events: ['ARCHIVED'] }
        : null;
    case 'unarchive':
      return marks.archivedAt === null
        ? null
        : { marks: { ...marks, archivedAt: null }, events: [INBOX_COUNTS] };
  }
}

// Where the first inbox commit exported them (code merged from it may import them here); their
// home is notifications/model.ts, beside the other event types.
export { INBOX_EVENT_TYPES, type InboxEventType } from '../notifications/model.ts';
