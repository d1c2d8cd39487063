import { NOTIFICATION_COLUMNS } from '../rows.ts';

/** What a SQLite fan-out leaves out of each notification it makes: its broadcast's, read from there. */
const FROM_BROADCAST = ['content', 'variables', 'metadata', 'trace_context'] as const;

/**
 * The columns a SQLite reader of notification records selects (NOTIFICATION_COLUMNS, the rows
 * aliased as `notifications`): a broadcast's notification holds no copy of the broadcast's content,
 * variables, metadata or trace context (sqlite/broadcasts.ts), so each is read from the broadcast
 * when the row's is NULL. A copy was 65 bytes a row in the bench's broadcast, a 2,000-character
 * one made a row of two pages (8,955 bytes written a notification against 1,034, a fifth of the
 * rate: decision record 0059). A row not of a broadcast reads its own, with no look-up.
 */
export const RECORD_COLUMNS = FROM_BROADCAST.reduce(
  (columns, c) =>
    columns.replace(
      new RegExp(`\\b${c}\\b`),
      `CASE WHEN broadcast_id IS NULL THEN ${c} ELSE coalesce(${c},
        (SELECT b.${c} FROM broadcasts b WHERE b.id = notifications.broadcast_id)) END AS ${c}`,
    ),
  NOTIFICATION_COLUMNS,
);
