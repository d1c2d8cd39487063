import { setImmediate as yieldTurn } from 'node:timers/promises';
import type { TopicStore } from '../port/topics.ts';
import {
  PURGE_CHUNK,
  type SubscriberRow,
  subscriberFromRow,
  TOPIC_COLUMNS,
  type TopicRow,
  topicFromRow,
} from '../rows-topics.ts';
import { preparedOnce, type SqliteDb } from './open.ts';

function prepare(db: SqliteDb) {
  return {
    one: db.prepare<[string, string], TopicRow>(
      `SELECT ${TOPIC_COLUMNS} FROM topics WHERE tenant = ? AND topic_key = ?`,
    ),
    upsert: db.prepare<[string, string, string | null, number, number], TopicRow>(
      `INSERT INTO topics (tenant, topic_key, name, subscribers, created_at, updated_at) VALUES (?, ?, ?, 0, ?, ?)
       ON CONFLICT (tenant, topic_key) DO UPDATE SET name = excluded.name, updated_at = excluded.updated_at
       RETURNING ${TOPIC_COLUMNS}`,
    ),
    list: db.prepare<[string, string, number], TopicRow>(
      `SELECT ${TOPIC_COLUMNS} FROM topics WHERE tenant = ? AND topic_key > ? ORDER BY topic_key LIMIT ?`,
    ),
    purge: db.prepare<[string, string, number, number]>(
      `DELETE FROM topic_subscribers WHERE seq IN
         (SELECT seq FROM topic_subscribers WHERE tenant = ? AND topic_key = ? AND seq <= ? LIMIT ?)`,
    ),
    // max() alone, so SQLite reads the last rowid rather than the table.
    lastSeq: db.prepare('SELECT max(seq) FROM topic_subscribers').pluck(),
    remove: db.prepare<[string, string]>('DELETE FROM topics WHERE tenant = ? AND topic_key = ?'),
    // One statement for the batch: the IDs as a JSON array, each joined to its recipient (an ID
    // that names none is left out), a membership already there left as it is. CROSS JOIN keeps
    // the IDs the outer loop, each a primary-key seek: as a plain JOIN SQLite read the tenant's
    // every recipient once per ID (60,000 recipients: minutes a batch). `WHERE true`: SQLite's
    // parser needs it before an upsert clause on INSERT ... SELECT.
    subscribe: db.prepare<[string, string, number, string, string]>(
      `INSERT INTO topic_subscribers (tenant, topic_key, recipient_id, created_at)
       SELECT ?, ?, r.recipient_id, ? FROM json_each(?) k
         CROSS JOIN recipients r ON r.tenant = ? AND r.recipient_id = k.value
       WHERE true ORDER BY k.key
       ON CONFLICT (tenant, topic_key, recipient_id) DO NOTHING`,
    ),
    unknown: db
      .prepare<[string, string]>(
        `SELECT k.value FROM json_each(?) k
         WHERE NOT EXISTS (SELECT 1 FROM recipients r WHERE r.tenant = ? AND r.recipient_id = k.value)
         ORDER BY k.key`,
      )
      .pluck(),
    count: db.prepare<[number, string, string]>(
      'UPDATE topics SET subscribers = subscribers + ? WHERE tenant = ? AND topic_key = ?',
    ),
    unsubscribe: db.prepare<[string, string, string]>(
      'DELETE FROM topic_subscribers WHERE tenant = ? AND topic_key = ? AND recipient_id = ?',
    ),
    members: db.prepare<[string, string, string, number], SubscriberRow>(
      `SELECT recipient_id, created_at FROM topic_subscribers
       WHERE tenant = ? AND topic_key = ? AND recipient_id > ? ORDER BY recipient_id LIMIT ?`,
    ),
    // A recipient's memberships, for its erasure: each of its topics counts one fewer.
    leaveAll: db.prepare<[string, string, string]>(
      `UPDATE topics SET subscribers = subscribers - 1 WHERE tenant = ? AND topic_key IN
         (SELECT topic_key FROM topic_subscribers WHERE tenant = ? AND recipient_id = ?)`,
    ),
    removeMemberships: db.prepare<[string, string]>(
      'DELETE FROM topic_subscribers WHERE tenant = ? AND recipient_id = ?',
    ),
  };
}

const statements = preparedOnce(prepare);

/**
 * Erases a recipient's memberships and counts them out of their topics, inside the caller's
 * transaction (the recipient's erasure, sqlite/recipients.ts).
 */
export function leaveTopicsSync(db: SqliteDb, tenant: string, id: string): void {
  const s = statements(db);
  s.leaveAll.run(tenant, tenant, id);
  s.removeMemberships.run(tenant, id);
}

/** The SQLite implementation of the topic port. */
export function createSqliteTopics(db: SqliteDb): TopicStore {
  const s = statements(db);
  const put = db.transaction((tenant: string, key: string, name: string | null, now: number) => {
    const created = s.one.get(tenant, key) === undefined;
    const row = s.upsert.get(tenant, key, name, now, now) as TopicRow;
    return { record: topicFromRow(row), created };
  });
  /**
   * Deletes a key's memberships (of a topic erased, or erased before a crash) a chunk a
   * transaction, up to the newest membership when it starts: a topic made again under that key
   * meanwhile keeps the members it gets (their seq is above it).
   */
  const purge = async (tenant: string, key: string) => {
    const until = (s.lastSeq.get() as number | null) ?? 0;
    const chunk = db.transaction(() => s.purge.run(tenant, key, until, PURGE_CHUNK).changes);
    while (chunk.immediate() === PURGE_CHUNK) await yieldTurn();
  };
  const subscribe = db.transaction((tenant: string, key: string, ids: readonly string[], now: number) => {
    if (s.one.get(tenant, key) === undefined) return null;
    const list = JSON.stringify(ids);
    const added = s.subscribe.run(tenant, key, now, list, tenant).changes;
    if (added > 0) s.count.run(added, tenant, key);
    return { added, unknown: s.unknown.all(list, tenant) as string[] };
  });
  const unsubscribe = db.transaction((tenant: string, key: string, id: string) => {
    if (s.one.get(tenant, key) === undefined) return 'topic' as const;
    if (s.unsubscribe.run(tenant, key, id).changes === 0) return 'member' as const;
    s.count.run(-1, tenant, key);
    return 'done' as const;
  });
  return {
    async put(tenant, key, name, now) {
      if (s.one.get(tenant, key) === undefined) await purge(tenant, key);
      return put.immediate(tenant, key, name, now);
    },
    async get(tenant, key) {
      const row = s.one.get(tenant, key);
      return row ? topicFromRow(row) : null;
    },
    async list(tenant, options) {
      return s.list.all(tenant, options.after ?? '', options.limit).map(topicFromRow);
    },
    async remove(tenant, key) {
      if (s.remove.run(tenant, key).changes === 0) return false;
      await purge(tenant, key);
      return true;
    },
    async subscribe(tenant, key, ids, now) {
      return subscribe.immediate(tenant, key, ids, now);
    },
    async unsubscribe(tenant, key, id) {
      return unsubscribe.immediate(tenant, key, id);
    },
    async subscribers(tenant, key, options) {
      if (s.one.get(tenant, key) === undefined) return null;
      return s.members.all(tenant, key, options.after ?? '', options.limit).map(subscriberFromRow);
    },
  };
}
