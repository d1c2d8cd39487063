import { applyInboxAction } from '../../inbox/actions.ts';
import type { InboxCountsType, InboxEventType } from '../../notifications/model.ts';
import type { InboxAction, InboxStore } from '../port/inbox.ts';
import type { InboxEntryRow } from '../queue-core.ts';
import { INBOX_COLUMNS, INBOX_FILTER_SQL, INBOX_START, type InboxRow, inboxFromRow } from '../rows-inbox.ts';
import type { Query, Sql } from './connect.ts';

const json = (value: unknown) => JSON.stringify(value);

/** Stores delivered messages in one statement, inside the caller's transaction (a completion's). */
export async function storeInboxOn(tx: Query, entries: readonly InboxEntryRow[], now: number): Promise<void> {
  const rows = entries.map((e) => ({
    id: e.id,
    seq: e.seq,
    tenant: e.tenant,
    recipient_id: e.recipientId,
    title: e.title,
    body: e.body,
    url: e.url,
    data: e.data === null ? null : json(e.data),
    category: e.category,
  }));
  await tx`INSERT INTO inbox_messages (id, notification_seq, tenant, recipient_id, title, body, url, data, category, created_at)
    SELECT id, seq, tenant, recipient_id, title, body, url, data, category, ${now}::bigint
    FROM json_to_recordset(${json(rows)}::text::json)
      AS m(id text, seq bigint, tenant text, recipient_id text, title text, body text, url text, data text, category text)
    ON CONFLICT (id) DO NOTHING`;
}

/** Erases a recipient's messages, inside the caller's transaction (the recipient's removal). */
export async function eraseInboxOn(tx: Query, tenant: string, recipientId: string): Promise<void> {
  await tx`DELETE FROM inbox_messages WHERE tenant = ${tenant} AND recipient_id = ${recipientId}`;
}

interface Change {
  id: string;
  seen_at: number | null;
  read_at: number | null;
  archived_at: number | null;
}

/**
 * Applies `action` to rows locked by this transaction (FOR UPDATE): their new marks in one
 * statement, their events in another, in list order. Returns the messages as they now are and
 * which changed.
 */
async function applyTo(tx: Query, rows: readonly InboxRow[], action: InboxAction, now: number) {
  const changes: Change[] = [];
  const events: Array<{ seq: number; type: InboxEventType | InboxCountsType }> = [];
  const results = rows.map((row) => {
    const message = inboxFromRow(row);
    const next = applyInboxAction(message, action, now);
    if (!next) return { message, changed: false };
    const { seenAt, readAt, archivedAt } = next.marks;
    changes.push({ id: row.id, seen_at: seenAt, read_at: readAt, archived_at: archivedAt });
    for (const type of next.events) events.push({ seq: row.notification_seq, type });
    return { message: { ...message, ...next.marks }, changed: true };
  });
  if (changes.length > 0) {
    await tx`UPDATE inbox_messages m SET seen_at = c.seen_at, read_at = c.read_at, archived_at = c.archived_at
      FROM json_to_recordset(${json(changes)}::text::json) AS c(id text, seen_at bigint, read_at bigint, archived_at bigint)
      WHERE m.id = c.id`;
  }
  if (events.length > 0) {
    const ordered = events.map((e, ord) => ({ ...e, ord }));
    await tx`INSERT INTO notification_events (notification_seq, type, at)
      SELECT seq, type, ${now}::bigint FROM json_to_recordset(${json(ordered)}::text::json) AS e(seq bigint, type text, ord int)
      ORDER BY ord`;
  }
  return results;
}

/** The PostgreSQL implementation of the inbox port; same semantics as the SQLite one. */
export function createPostgresInbox(sql: Sql): InboxStore {
  const columns = sql.unsafe(INBOX_COLUMNS);
  return {
    async list(tenant, recipientId, options) {
      const after = options.after ?? INBOX_START;
      const rows = await sql<InboxRow[]>`SELECT ${columns} FROM inbox_messages
        WHERE tenant = ${tenant} AND recipient_id = ${recipientId} AND ${sql.unsafe(INBOX_FILTER_SQL[options.filter])}
          AND (created_at, id) < (${after.createdAt}::bigint, ${after.id}::text)
        ORDER BY created_at DESC, id DESC LIMIT ${options.limit}`;
      return rows.map(inboxFromRow);
    },
    async counts(tenant, recipientId) {
      const [row] = await sql<Array<{ unread: number; unseen: number }>>`SELECT
        (SELECT count(*) FROM inbox_messages
          WHERE tenant = ${tenant} AND recipient_id = ${recipientId} AND ${sql.unsafe(INBOX_FILTER_SQL.unread)})::int AS unread,
        (SELECT count(*) FROM inbox_messages
          WHERE tenant = ${tenant} AND recipient_id = ${recipientId} AND ${sql.unsafe(INBOX_FILTER_SQL.unseen)})::int AS unseen`;
      return { unread: Number(row?.unread ?? 0), unseen: Number(row?.unseen ?? 0) };
    },
    async get(tenant, recipientId, id) {
      const [row] = await sql<InboxRow[]>`SELECT ${columns} FROM inbox_messages
        WHERE id = ${id} AND tenant = ${tenant} AND recipient_id = ${recipientId}`;
      return row ? inboxFromRow(row) : null;
    },
    async act(tenant, recipientId, id, action, now) {
      return sql.begin(async (tx) => {
        const rows = await tx<InboxRow[]>`SELECT ${columns} FROM inbox_messages
          WHERE id = ${id} AND tenant = ${tenant} AND recipient_id = ${recipientId} FOR UPDATE`;
        const [result] = await applyTo(tx, rows, action, now);
        return result ?? null;
      });
    },
    async actAll(tenant, recipientId, action, now) {
      const filter = sql.unsafe(INBOX_FILTER_SQL[action === 'seen' ? 'unseen' : 'unread']);
      return sql.begin(async (tx) => {
        // Oldest first, so the log's events follow the messages' order of arrival; locked in
        // one order, so two concurrent read-alls of one recipient never deadlock.
        const rows = await tx<InboxRow[]>`SELECT ${columns} FROM inbox_messages
          WHERE tenant = ${tenant} AND recipient_id = ${recipientId} AND ${filter}
          ORDER BY created_at, id FOR UPDATE`;
        const results = await applyTo(tx, rows, action, now);
        return results.filter((r) => r.changed).length;
      });
    },
  };
}
