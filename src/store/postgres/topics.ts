import type { TopicStore } from '../port/topics.ts';
import {
  PURGE_CHUNK,
  type SubscriberRow,
  subscriberFromRow,
  TOPIC_COLUMNS,
  type TopicRow,
  topicFromRow,
} from '../rows-topics.ts';
import type { Query, Sql } from './connect.ts';

const json = (value: unknown) => JSON.stringify(value);

/**
 * Locks a topic's row (null: no such topic). Every change of a topic's memberships takes it
 * first, so a broadcast starting its fan-out under the same lock sees every membership of the
 * topic committed, and none to come below its snapshot (postgres/broadcasts.ts).
 */
async function lockTopic(tx: Query, tenant: string, key: string) {
  const [row] = await tx<{ subscribers: number }[]>`
    SELECT subscribers FROM topics WHERE tenant = ${tenant} AND topic_key = ${key} FOR UPDATE`;
  return row ?? null;
}

/**
 * Erases a recipient's memberships and counts them out of their topics, inside the caller's
 * transaction (the recipient's erasure, postgres/recipients.ts). The recipient's row is locked
 * first (FOR UPDATE, against subscribe's KEY SHARE): a subscribe under way commits its
 * membership before these statements read them, and one that comes after finds no recipient.
 * Without it, a membership committed between the count and the delete was deleted uncounted.
 * Then its topics, in key order, as every other writer of several topics would: recipients
 * before topics, everywhere.
 */
export async function leaveTopicsOn(tx: Query, tenant: string, id: string): Promise<void> {
  await tx`SELECT 1 FROM recipients WHERE tenant = ${tenant} AND recipient_id = ${id} FOR UPDATE`;
  await tx`
    UPDATE topics t SET subscribers = subscribers - 1 FROM (
      SELECT topic_key FROM topics WHERE tenant = ${tenant} AND topic_key IN
        (SELECT topic_key FROM topic_subscribers WHERE tenant = ${tenant} AND recipient_id = ${id})
      ORDER BY topic_key FOR UPDATE) mine
    WHERE t.tenant = ${tenant} AND t.topic_key = mine.topic_key`;
  await tx`DELETE FROM topic_subscribers WHERE tenant = ${tenant} AND recipient_id = ${id}`;
}

/**
 * Deletes a key's memberships (of a topic erased, or erased before a crash) a chunk a
 * transaction, up to the newest membership when it starts: a topic made again under that key
 * meanwhile keeps the members it gets (their seq is above it).
 */
async function purge(sql: Sql, tenant: string, key: string): Promise<void> {
  const [last] = await sql<{ s: string | null }[]>`SELECT max(seq) AS s FROM topic_subscribers`;
  const until = Number(last?.s ?? 0);
  for (;;) {
    const gone = await sql`DELETE FROM topic_subscribers WHERE seq IN (SELECT seq FROM topic_subscribers
      WHERE tenant = ${tenant} AND topic_key = ${key} AND seq <= ${until} LIMIT ${PURGE_CHUNK})`;
    if (gone.count < PURGE_CHUNK) return;
  }
}

/** The PostgreSQL implementation of the topic port; same semantics as the SQLite one. */
export function createPostgresTopics(sql: Sql): TopicStore {
  return {
    async put(tenant, key, name, now) {
      const [there] = await sql`SELECT 1 FROM topics WHERE tenant = ${tenant} AND topic_key = ${key}`;
      if (!there) await purge(sql, tenant, key);
      const [row] = await sql<Array<TopicRow & { created: boolean }>>`
        INSERT INTO topics (tenant, topic_key, name, subscribers, created_at, updated_at)
        VALUES (${tenant}, ${key}, ${name}, 0, ${now}, ${now})
        ON CONFLICT (tenant, topic_key) DO UPDATE SET name = excluded.name, updated_at = excluded.updated_at
        RETURNING ${sql.unsafe(TOPIC_COLUMNS)}, (xmax = 0) AS created`;
      const stored = row as TopicRow & { created: boolean };
      return { record: topicFromRow(stored), created: stored.created };
    },
    async get(tenant, key) {
      const [row] = await sql<TopicRow[]>`
        SELECT ${sql.unsafe(TOPIC_COLUMNS)} FROM topics WHERE tenant = ${tenant} AND topic_key = ${key}`;
      return row ? topicFromRow(row) : null;
    },
    async list(tenant, options) {
      const rows = await sql<TopicRow[]>`
        SELECT ${sql.unsafe(TOPIC_COLUMNS)} FROM topics WHERE tenant = ${tenant} AND topic_key > ${options.after ?? ''}
        ORDER BY topic_key LIMIT ${options.limit}`;
      return rows.map(topicFromRow);
    },
    async remove(tenant, key) {
      const gone = await sql`DELETE FROM topics WHERE tenant = ${tenant} AND topic_key = ${key}`;
      if (gone.count === 0) return false;
      await purge(sql, tenant, key);
      return true;
    },
    async subscribe(tenant, key, ids, now) {
      return sql.begin(async (tx) => {
        // The recipients first (KEY SHARE, in ID order: subscribes do not block each other), then
        // the topic: an erasure under way (leaveTopicsOn) finishes before, or waits for this one.
        await tx`SELECT 1 FROM recipients WHERE tenant = ${tenant}
          AND recipient_id IN (SELECT json_array_elements_text(${json(ids)}::text::json))
          ORDER BY recipient_id FOR KEY SHARE`;
        if ((await lockTopic(tx, tenant, key)) === null) return null;
        // One statement for the batch: the IDs joined to their recipients, in input order, a
        // membership already there left as it is; the IDs naming no recipient come back too.
        const [row] = await tx<{ added: number; unknown: string[] }[]>`
          WITH ids AS (SELECT value AS id, ord FROM json_array_elements_text(${json(ids)}::text::json)
                         WITH ORDINALITY AS e(value, ord)),
          known AS (SELECT ids.id, ids.ord FROM ids JOIN recipients r ON r.tenant = ${tenant} AND r.recipient_id = ids.id),
          ins AS (INSERT INTO topic_subscribers (tenant, topic_key, recipient_id, created_at)
                  SELECT ${tenant}, ${key}, id, ${now}::bigint FROM (SELECT DISTINCT ON (id) id, ord FROM known ORDER BY id, ord) d
                  ORDER BY ord
                  ON CONFLICT (tenant, topic_key, recipient_id) DO NOTHING RETURNING 1),
          counted AS (UPDATE topics SET subscribers = subscribers + (SELECT count(*) FROM ins)
                      WHERE tenant = ${tenant} AND topic_key = ${key} RETURNING 1)
          SELECT (SELECT count(*) FROM ins)::int AS added,
                 coalesce((SELECT array_agg(id ORDER BY ord) FROM ids WHERE NOT EXISTS
                   (SELECT 1 FROM known WHERE known.ord = ids.ord)), '{}') AS unknown,
                 (SELECT count(*) FROM counted) AS c`;
        const result = row as { added: number; unknown: string[] };
        return { added: Number(result.added), unknown: result.unknown };
      });
    },
    async unsubscribe(tenant, key, id) {
      return sql.begin(async (tx) => {
        if ((await lockTopic(tx, tenant, key)) === null) return 'topic' as const;
        const gone = await tx`
          DELETE FROM topic_subscribers WHERE tenant = ${tenant} AND topic_key = ${key} AND recipient_id = ${id}`;
        if (gone.count === 0) return 'member' as const;
        await tx`UPDATE topics SET subscribers = subscribers - 1 WHERE tenant = ${tenant} AND topic_key = ${key}`;
        return 'done' as const;
      });
    },
    async subscribers(tenant, key, options) {
      const [topic] = await sql`SELECT 1 FROM topics WHERE tenant = ${tenant} AND topic_key = ${key}`;
      if (!topic) return null;
      const rows = await sql<SubscriberRow[]>`
        SELECT recipient_id, created_at FROM topic_subscribers
        WHERE tenant = ${tenant} AND topic_key = ${key} AND recipient_id > ${options.after ?? ''}
        ORDER BY recipient_id LIMIT ${options.limit}`;
      return rows.map(subscriberFromRow);
    },
  };
}
