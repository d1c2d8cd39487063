import { applyInboxAction } from '../../inbox/actions.ts';
import type { InboxCountsType, InboxEventType } from '../../notifications/model.ts';
import type { InboxAction, InboxFilter, InboxStore } from '../port/inbox.ts';
import type { InboxEntryRow } from '../queue-core.ts';
import { INBOX_COLUMNS, INBOX_FILTER_SQL, INBOX_START, type InboxRow, inboxFromRow } from '../rows-inbox.ts';
import { preparedOnce, type SqliteDb } from './open.ts';

const FILTERS = Object.keys(INBOX_FILTER_SQL) as InboxFilter[];

function prepare(db: SqliteDb) {
  // One statement per filter, each a backward range of its index from the cursor (a row value).
  const list = Object.fromEntries(
    FILTERS.map((filter) => [
      filter,
      db.prepare<[string, string, number, string, number], InboxRow>(
        `SELECT ${INBOX_COLUMNS} FROM inbox_messages
         WHERE tenant = ? AND recipient_id = ? AND ${INBOX_FILTER_SQL[filter]} AND (created_at, id) < (?, ?)
         ORDER BY created_at DESC, id DESC LIMIT ?`,
      ),
    ]),
  ) as Record<
    InboxFilter,
    import('better-sqlite3').Statement<[string, string, number, string, number], InboxRow>
  >;
  return {
    list,
    counts: db.prepare<[string, string, string, string], { unread: number; unseen: number }>(
      `SELECT
         (SELECT count(*) FROM inbox_messages WHERE tenant = ? AND recipient_id = ? AND ${INBOX_FILTER_SQL.unread}) AS unread,
         (SELECT count(*) FROM inbox_messages WHERE tenant = ? AND recipient_id = ? AND ${INBOX_FILTER_SQL.unseen}) AS unseen`,
    ),
    one: db.prepare<[string, string, string], InboxRow>(
      `SELECT ${INBOX_COLUMNS} FROM inbox_messages WHERE id = ? AND tenant = ? AND recipient_id = ?`,
    ),
    // What seen-all and read-all may change: the messages not archived and not yet seen (read).
    unseen: db.prepare<[string, string], InboxRow>(
      `SELECT ${INBOX_COLUMNS} FROM inbox_messages WHERE tenant = ? AND recipient_id = ? AND ${INBOX_FILTER_SQL.unseen}`,
    ),
    unread: db.prepare<[string, string], InboxRow>(
      `SELECT ${INBOX_COLUMNS} FROM inbox_messages WHERE tenant = ? AND recipient_id = ? AND ${INBOX_FILTER_SQL.unread}`,
    ),
    mark: db.prepare<[number | null, number | null, number | null, string]>(
      'UPDATE inbox_messages SET seen_at = ?, read_at = ?, archived_at = ? WHERE id = ?',
    ),
    event: db.prepare<[number, string, number]>(
      'INSERT INTO notification_events (notification_seq, type, at) VALUES (?, ?, ?)',
    ),
    // Every message of a cycle in one statement (one JSON array of rows), not one statement each.
    insert: db.prepare<[number, string]>(
      `INSERT INTO inbox_messages (id, notification_seq, tenant, recipient_id, title, body, url, data, category, created_at)
       SELECT m.value ->> 0, m.value ->> 1, m.value ->> 2, m.value ->> 3, m.value ->> 4, m.value ->> 5,
         m.value ->> 6, m.value ->> 7, m.value ->> 8, ?
       FROM json_each(?) AS m WHERE true ON CONFLICT (id) DO NOTHING`,
    ),
    erase: db.prepare<[string, string]>('DELETE FROM inbox_messages WHERE tenant = ? AND recipient_id = ?'),
  };
}

const statements = preparedOnce(prepare);

/**
 * Stores delivered messages in one statement, inside the caller's transaction (a completion's).
 * Each row goes as an array (`data` as its JSON text), in the column order of the insert.
 */
export function storeInboxSync(db: SqliteDb, entries: readonly InboxEntryRow[], now: number): void {
  const rows = entries.map((e) => [
    e.id,
    e.seq,
    e.tenant,
    e.recipientId,
    e.title,
    e.body,
    e.url,
    e.data === null ? null : JSON.stringify(e.data),
    e.category,
  ]);
  statements(db).insert.run(now, JSON.stringify(rows));
}

/** Erases a recipient's messages, inside the caller's transaction (the recipient's removal). */
export function eraseInboxSync(db: SqliteDb, tenant: string, recipientId: string): void {
  statements(db).erase.run(tenant, recipientId);
}

/** The SQLite implementation of the inbox port. */
export function createSqliteInbox(db: SqliteDb): InboxStore {
  const s = statements(db);
  /** Applies one action to a row read in this transaction; whether it changed. */
  const applyTo = (row: InboxRow, action: InboxAction, now: number) => {
    const message = inboxFromRow(row);
    const next = applyInboxAction(message, action, now);
    if (!next) return { message, changed: false };
    const { seenAt, readAt, archivedAt } = next.marks;
    s.mark.run(seenAt, readAt, archivedAt, row.id);
    logEvents(row.notification_seq, next.events, now);
    return { message: { ...message, ...next.marks }, changed: true };
  };
  const logEvents = (seq: number, events: ReadonlyArray<InboxEventType | InboxCountsType>, now: number) => {
    for (const type of events) s.event.run(seq, type, now);
  };
  const act = db.transaction(
    (tenant: string, recipientId: string, id: string, action: InboxAction, now: number) => {
      const row = s.one.get(id, tenant, recipientId);
      return row ? applyTo(row, action, now) : null;
    },
  );
  const actAll = db.transaction(
    (tenant: string, recipientId: string, action: 'seen' | 'read', now: number) => {
      const rows = (action === 'seen' ? s.unseen : s.unread).all(tenant, recipientId);
      // Oldest first, so the log's events follow the messages' order of arrival.
      rows.sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1));
      let changed = 0;
      for (const row of rows) if (applyTo(row, action, now).changed) changed++;
      return changed;
    },
  );
  return {
    async list(tenant, recipientId, options) {
      const after = options.after ?? INBOX_START;
      return s.list[options.filter]
        .all(tenant, recipientId, after.createdAt, after.id, options.limit)
        .map(inboxFromRow);
    },
    async counts(tenant, recipientId) {
      const row = s.counts.get(tenant, recipientId, tenant, recipientId) as {
        unread: number;
        unseen: number;
      };
      return { unread: row.unread, unseen: row.unseen };
    },
    async get(tenant, recipientId, id) {
      const row = s.one.get(id, tenant, recipientId);
      return row ? inboxFromRow(row) : null;
    },
    async act(tenant, recipientId, id, action, now) {
      return act.immediate(tenant, recipientId, id, action, now);
    },
    async actAll(tenant, recipientId, action, now) {
      return actAll.immediate(tenant, recipientId, action, now);
    },
  };
}
