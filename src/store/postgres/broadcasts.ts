import { idPrefix } from '../../notifications/ids.ts';
import { priorityOf, priorityRank } from '../../notifications/model.ts';
import { CANCEL } from '../../notifications/status.ts';
import { isUrgent } from '../../notifications/wakeup.ts';
import { actionUpdateWhere } from '../actions.ts';
import type { BroadcastStore, FanOutStep } from '../port/broadcasts.ts';
import {
  BROADCAST_COLUMNS,
  type BroadcastRow,
  broadcastFromRow,
  fannedValues,
  stepOf,
} from '../rows-topics.ts';
import type { Query, Sql } from './connect.ts';
import { joinRank } from './lanes.ts';
import { URGENT_PAYLOAD, WAKEUP_CHANNEL } from './wakeups.ts';

const CANCEL_CHUNK = actionUpdateWhere(
  CANCEL,
  joinRank,
  '$1',
  'tenant = $2 AND broadcast_id = $3 AND seq > $4 AND seq <= $5',
);

/** The PostgreSQL implementation of the broadcast port; same semantics as the SQLite one. */
export function createPostgresBroadcasts(sql: Sql): BroadcastStore {
  const fanOut = async (tx: Query, b: BroadcastRow, now: number, chunk: number): Promise<FanOutStep> => {
    const starting = b.status === 'QUEUED';
    let until = Number(b.until_seq);
    let recipients = Number(b.recipients);
    if (starting) {
      // Under the topic's lock no membership of it is in flight: the snapshot is exact
      // (postgres/topics.ts lockTopic).
      const [topic] = await tx<{ subscribers: number }[]>`
        SELECT subscribers FROM topics WHERE tenant = ${b.tenant} AND topic_key = ${b.topic_key} FOR UPDATE`;
      recipients = Number(topic?.subscribers ?? 0);
      const [top] = await tx<{ s: number | null }[]>`SELECT max(seq) AS s FROM topic_subscribers`;
      until = Number(top?.s ?? 0);
    }
    const from = b.fanned_to;
    // A topic erased meanwhile fans out to no one more, while its memberships are being deleted.
    const [bounds] = await tx<{ n: number; last: string | null }[]>`
      SELECT count(*)::int AS n, max(recipient_id) AS last FROM (SELECT recipient_id FROM topic_subscribers
        WHERE tenant = ${b.tenant} AND topic_key = ${b.topic_key} AND recipient_id > ${from} AND seq <= ${until}
          AND EXISTS (SELECT 1 FROM topics WHERE tenant = ${b.tenant} AND topic_key = ${b.topic_key})
        ORDER BY recipient_id LIMIT ${chunk}) c`;
    const n = Number(bounds?.n ?? 0);
    const last = bounds?.last ?? null;
    const { waiting, ...v } = fannedValues(b);
    if (n > 0) {
      const [rank] = waiting
        ? [{ base: 0 }]
        : await tx.unsafe<{ base: number }[]>(
            `SELECT ${joinRank('$1::text', '$2::smallint', '$3::text')} AS base`,
            [v.tenant, v.priority, v.channel],
          );
      const base = Number(rank?.base ?? 0);
      const hint = isUrgent(priorityOf(v.priority)) ? URGENT_PAYLOAD : '';
      await tx`
        WITH c AS (SELECT recipient_id, row_number() OVER (ORDER BY recipient_id) - 1 AS k FROM topic_subscribers
                   WHERE tenant = ${b.tenant} AND topic_key = ${b.topic_key} AND recipient_id > ${from}
                     AND recipient_id <= ${last} AND seq <= ${until}),
        ins AS (INSERT INTO notifications (id, tenant, channel, priority, status, queue_state, due_at, recipient,
                  template_key, template_version, content, variables, metadata, category, locale, scheduled_at,
                  expires_at, attempts, created_at, updated_at, lane_rank, broadcast_id, trace_context)
                SELECT ${idPrefix(now)} || substr(gen_random_uuid()::text, 16), ${v.tenant}, ${v.channel},
                  ${v.priority}::smallint, 'QUEUED', ${v.queueState}, ${v.dueAt}::bigint,
                  '{"id":' || to_json(recipient_id)::text || '}', ${v.templateKey}, ${v.templateVersion}::int,
                  ${v.content}, ${v.variables}, ${v.metadata}, ${v.category}, ${v.locale}, ${v.scheduledAt}::bigint,
                  ${v.expiresAt}::bigint, 0,
                  ${now}::bigint, ${now}::bigint, ${base}::bigint + k * ${waiting ? 0 : 1}, ${v.broadcastId},
                  -- In the trace of the request that made the broadcast (docs/tracing.md).
                  (SELECT trace_context FROM broadcasts WHERE tenant = ${v.tenant} AND id = ${v.broadcastId})
                FROM c ORDER BY k RETURNING 1)
        SELECT pg_notify(${WAKEUP_CHANNEL}, ${hint}) FROM (SELECT 1 FROM ins LIMIT 1) one`;
    }
    const finished = n < chunk;
    await tx`
      UPDATE broadcasts SET status = ${finished ? 'DONE' : 'FANNING_OUT'}, pending = ${finished ? 0 : 1},
        recipients = ${recipients}, until_seq = ${until}, fanned_to = ${last ?? from}, created = created + ${n},
        advanced_at = ${now}, updated_at = ${now}
      WHERE seq = ${Number(b.seq)}`;
    return stepOf(b, n, 0, finished);
  };

  const cancelSome = async (tx: Query, b: BroadcastRow, now: number, chunk: number): Promise<FanOutStep> => {
    const from = Number(b.cancelled_to);
    const [bounds] = await tx<{ n: number; last: number | null }[]>`
      SELECT count(*)::int AS n, max(seq) AS last FROM (SELECT seq FROM notifications
        WHERE tenant = ${b.tenant} AND broadcast_id = ${b.id} AND seq > ${from} ORDER BY seq LIMIT ${chunk}) c`;
    const n = Number(bounds?.n ?? 0);
    const last = bounds?.last === null || bounds?.last === undefined ? null : Number(bounds.last);
    let cancelled = 0;
    if (n > 0) {
      const rows = await tx.unsafe<{ seq: number }[]>(CANCEL_CHUNK, [now, b.tenant, b.id, from, last]);
      cancelled = rows.length;
      const { type, detail, source } = CANCEL.event;
      if (cancelled > 0) {
        await tx`INSERT INTO notification_events (notification_seq, type, at, attempt, provider, detail, source)
          SELECT s, ${type}, ${now}, NULL, NULL, ${detail}, ${source}
          FROM unnest(${rows.map((r) => Number(r.seq))}::bigint[]) AS s`;
      }
    }
    const finished = n < chunk;
    await tx`UPDATE broadcasts SET pending = ${finished ? 0 : 1}, cancelled_to = ${last ?? from}, advanced_at = ${now}
      WHERE seq = ${Number(b.seq)}`;
    return stepOf(b, 0, cancelled, finished);
  };

  const one = async (q: Query, tenant: string, id: string) => {
    const [row] = await q<BroadcastRow[]>`
      SELECT ${q.unsafe(BROADCAST_COLUMNS)} FROM broadcasts WHERE tenant = ${tenant} AND id = ${id}`;
    return row ? broadcastFromRow(row) : null;
  };

  return {
    async create(b) {
      return sql.begin(async (tx) => {
        const [topic] = await tx<{ subscribers: number }[]>`
          SELECT subscribers FROM topics WHERE tenant = ${b.tenant} AND topic_key = ${b.topic}`;
        if (!topic) return 'topic' as const;
        if (Number(topic.subscribers) === 0) return 'empty' as const;
        await tx`
          INSERT INTO broadcasts (id, tenant, topic_key, status, channel, priority, template_key, template_version,
            content, variables, metadata, category, locale, scheduled_at, expires_at, pending, advanced_at,
            created_at, updated_at, trace_context)
          VALUES (${b.id}, ${b.tenant}, ${b.topic}, 'QUEUED', ${b.channel}, ${priorityRank(b.priority)},
            ${b.templateKey}, ${b.templateVersion}, ${b.content}, ${b.variables}, ${b.metadata}, ${b.category},
            ${b.locale}, ${b.scheduledAt}, ${b.expiresAt}, 1, ${b.createdAt}, ${b.createdAt}, ${b.createdAt},
            ${b.traceContext ?? null})`;
        return 'created' as const;
      });
    },
    get: (tenant, id) => one(sql, tenant, id),
    async counts(tenant, id) {
      const rows = await sql<{ status: string; n: number }[]>`
        SELECT status, count(*)::int AS n FROM notifications WHERE tenant = ${tenant} AND broadcast_id = ${id}
        GROUP BY status`;
      return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    },
    async cancel(tenant, id, now) {
      // Waits for a step holding the broadcast, so the cancel's steps see every notification made.
      await sql`UPDATE broadcasts SET status = 'CANCELLED', pending = 1, updated_at = ${now}
        WHERE tenant = ${tenant} AND id = ${id} AND status <> 'CANCELLED'`;
      return one(sql, tenant, id);
    },
    async hasWork() {
      const rows = await sql`SELECT 1 FROM broadcasts WHERE pending = 1 LIMIT 1`;
      return rows.length > 0;
    },
    async step(now, chunk) {
      return sql.begin(async (tx) => {
        // A step locks its broadcast for its transaction: another worker skips it and takes the
        // next one, or none, so no two workers ever make one chunk.
        const [b] = await tx<BroadcastRow[]>`
          SELECT ${tx.unsafe(BROADCAST_COLUMNS)} FROM broadcasts WHERE pending = 1
          ORDER BY advanced_at LIMIT 1 FOR UPDATE SKIP LOCKED`;
        if (!b) return null;
        return b.status === 'CANCELLED' ? cancelSome(tx, b, now, chunk) : fanOut(tx, b, now, chunk);
      });
    },
  };
}
