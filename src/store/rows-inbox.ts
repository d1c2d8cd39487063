import type { InboxMessage } from './port/inbox.ts';

/** An inbox_messages row as both adapters read it (postgres.js parses BIGINT to number). */
export interface InboxRow {
  id: string;
  notification_seq: number;
  tenant: string;
  recipient_id: string;
  title: string;
  body: string;
  url: string | null;
  data: string | null;
  category: string | null;
  created_at: number;
  seen_at: number | null;
  read_at: number | null;
  archived_at: number | null;
}

export const INBOX_COLUMNS =
  'id, notification_seq, tenant, recipient_id, title, body, url, data, category, created_at, seen_at, read_at, archived_at';

const timeOrNull = (v: number | string | null) => (v === null ? null : Number(v));

export function inboxFromRow(row: InboxRow): InboxMessage {
  return {
    id: row.id,
    tenant: row.tenant,
    recipientId: row.recipient_id,
    title: row.title,
    body: row.body,
    url: row.url,
    data: row.data === null ? null : (JSON.parse(row.data) as Record<string, unknown>),
    category: row.category,
    createdAt: Number(row.created_at),
    seenAt: timeOrNull(row.seen_at),
    readAt: timeOrNull(row.read_at),
    archivedAt: timeOrNull(row.archived_at),
  };
}

/**
 * Each filter's condition, over the same columns in both databases: `all` leaves archived messages
 * out; `unread` and `unseen` are the partial indexes' own conditions (migration 360), so they page
 * through those indexes.
 */
export const INBOX_FILTER_SQL = {
  all: 'archived_at IS NULL',
  unread: 'read_at IS NULL AND archived_at IS NULL',
  unseen: 'seen_at IS NULL AND archived_at IS NULL',
  archived: 'archived_at IS NOT NULL',
} as const;

/** A cursor before every message: the first page of a list. */
export const INBOX_START = { createdAt: Number.MAX_SAFE_INTEGER, id: '' };
