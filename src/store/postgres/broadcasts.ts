import { priorityOf, priorityRank } from '../../notifications/model.ts';
import { CANCEL } from '../../notifications/status.ts';
import { isUrgent } from '../../notifications/wakeup.ts';
import { actionUpdateWhere } from '../actions.ts';
import { fanOutIdRest, fanOutIdStart } from '../fan-out-ids.ts';
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

/** A made notification's ID after its range's `fanOutIdStart` (store/fan-out-ids.ts), from its row's place `k`. */
const ID_REST = fanOutIdRest.postgres('k');

/**
 * A step's commits (a lease, a range made) do not wait for the WAL flush, as a worker's cycles do
 * (queue.ts) and as a SQLite step (decision records 0037, 0058): a crash of PostgreSQL loses only
 * the latest steps whole, a range's notifications with the deletion of its row (WAL is lost from
 * its end, so never a range's deletion without its notifications), and they are made again from
 * the committed cursor and ranges; the broadcast itself (its 201) was committed durably.
 */
const relaxed = (tx: Query) => tx`SET LOCAL synchronous_commit = off`;

/**
 * The lock a range made `inTurn` holds (transaction-level, exclusive): while urgent work arrives,
 * the workers make one range at a time, so the database gives the fan-out one core, not one a
 * worker, and the urgent lane's round trips find the other free (decision record 0062).
 */
export const IN_TURN_KEY = 'broadcast-fan-out:in-turn';
const inTurnLock = (tx: Query) => tx`SELECT pg_advisory_xact_lock(hashtextextended(${IN_TURN_KEY}, 0))`;

/** A leased range of a broadcast's snapshot (migration 402). */
interface RangeRow {
  broadcast_seq: number | string;
  after_id: string;
  last_id: string;
}

/** What a lease did: a step with no range to make (the end, or a cancel's step), or a range to make. */
type Leased =
  | { step: FanOutStep }
  | { b: BroadcastRow; range: { seq: number; after: string }; ranged: boolean };

/**
 * The PostgreSQL implementation of the broadcast port; same semantics as the SQLite one. Several
 * workers make one broadcast at once: each leases the next range of its snapshot and makes it in
 * its own transaction (docs/topics.md, decision record 0027).
 */
export function createPostgresBroadcasts(sql: Sql): BroadcastStore {
  /**
   * Leases the next range of a broadcast's snapshot, under the broadcast's row lock: at most
   * `chunk` recipient IDs after the cursor (fanned_to), written to broadcast_ranges as the cursor
   * moves past them. A short transaction (one index read of the range's bounds): the range is made
   * in another (makeRange), so that other workers lease and make the next ranges meanwhile.
   * When the cursor reaches the end of the snapshot the broadcast is `ranged`; with no range left
   * to make it is DONE here, else the last range made marks it DONE.
   */
  const lease = async (tx: Query, b: BroadcastRow, now: number, chunk: number): Promise<Leased> => {
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
    const ranged = n < chunk;
    let done = false;
    if (last !== null) {
      await tx`INSERT INTO broadcast_ranges (broadcast_seq, after_id, last_id) VALUES (${Number(b.seq)}, ${from}, ${last})`;
    } else {
      // Nothing more to lease: DONE unless ranges leased before are still being made.
      const [left] = await tx<{ n: number }[]>`
        SELECT count(*)::int AS n FROM broadcast_ranges WHERE broadcast_seq = ${Number(b.seq)}`;
      done = Number(left?.n ?? 0) === 0;
    }
    await tx`
      UPDATE broadcasts SET status = ${done ? 'DONE' : 'FANNING_OUT'}, pending = ${done ? 0 : 1},
        ranged = ${ranged ? 1 : 0}, recipients = ${recipients}, until_seq = ${until}, fanned_to = ${last ?? from},
        advanced_at = ${now}, updated_at = ${now}
      WHERE seq = ${Number(b.seq)}`;
    return last === null
      ? { step: stepOf(b, 0, 0, ranged) }
      : { b, range: { seq: Number(b.seq), after: from }, ranged };
  };

  /**
   * Makes one leased range's notifications and deletes the range, in one transaction: a range is
   * made exactly once, even when its worker dies (its row stays and another takes it). `which`:
   * the range this worker just leased, or any range no transaction holds (one a dead worker left).
   * Null when there is none (another worker took it). `inTurn`: made under inTurnLock.
   */
  const makeRange = (now: number, inTurn: boolean, which?: { seq: number; after: string }) =>
    sql.begin(async (tx): Promise<{ b: BroadcastRow; made: number } | null> => {
      const [r] = which
        ? await tx<RangeRow[]>`
            SELECT broadcast_seq, after_id, last_id FROM broadcast_ranges
            WHERE broadcast_seq = ${which.seq} AND after_id = ${which.after} FOR UPDATE SKIP LOCKED`
        : await tx<RangeRow[]>`
            SELECT broadcast_seq, after_id, last_id FROM broadcast_ranges
            ORDER BY broadcast_seq, after_id LIMIT 1 FOR UPDATE SKIP LOCKED`;
      if (!r) return null;
      // Before the broadcast's lock below, so a worker waiting for its turn holds none a cancel needs.
      if (inTurn) await inTurnLock(tx);
      await relaxed(tx);
      const seq = Number(r.broadcast_seq);
      // Shared with the other ranges being made, exclusive to a cancel (cancel below): a cancel
      // waits for the ranges under way, and a range made after it sees CANCELLED and makes nothing.
      await tx`SELECT pg_advisory_xact_lock_shared(hashtextextended(${`broadcast:${seq}`}, 0))`;
      const [b] = await tx<BroadcastRow[]>`
        SELECT ${tx.unsafe(BROADCAST_COLUMNS)} FROM broadcasts WHERE seq = ${seq}`;
      await tx`DELETE FROM broadcast_ranges WHERE broadcast_seq = ${seq} AND after_id = ${r.after_id}`;
      if (!b || b.status === 'CANCELLED') return b ? { b, made: 0 } : null;
      const { waiting, ...v } = fannedValues(b);
      const [rank] = waiting
        ? [{ base: 0 }]
        : await tx.unsafe<{ base: number }[]>(
            `SELECT ${joinRank('$1::text', '$2::smallint', '$3::text')} AS base`,
            [v.tenant, v.priority, v.channel],
          );
      const base = Number(rank?.base ?? 0);
      const hint = isUrgent(priorityOf(v.priority)) ? URGENT_PAYLOAD : '';
      const [inserted] = await tx<{ n: number }[]>`
        WITH c AS (SELECT recipient_id, row_number() OVER (ORDER BY recipient_id) - 1 AS k FROM topic_subscribers
                   WHERE tenant = ${b.tenant} AND topic_key = ${b.topic_key} AND recipient_id > ${r.after_id}
                     AND recipient_id <= ${r.last_id} AND seq <= ${Number(b.until_seq)}
                     AND EXISTS (SELECT 1 FROM topics WHERE tenant = ${b.tenant} AND topic_key = ${b.topic_key})),
        ins AS (INSERT INTO notifications (id, tenant, channel, priority, status, queue_state, due_at, recipient,
                  template_key, template_version, content, variables, metadata, category, locale, scheduled_at,
                  expires_at, attempts, created_at, updated_at, lane_rank, broadcast_id, trace_context)
                SELECT ${fanOutIdStart(now)}::text || ${tx.unsafe(ID_REST)}, ${v.tenant}, ${v.channel},
                  ${v.priority}::smallint, 'QUEUED', ${v.queueState}, ${v.dueAt}::bigint,
                  '{"id":' || to_json(recipient_id)::text || '}', ${v.templateKey}, ${v.templateVersion}::int,
                  ${v.content}, ${v.variables}, ${v.metadata}, ${v.category}, ${v.locale}, ${v.scheduledAt}::bigint,
                  ${v.expiresAt}::bigint, 0,
                  ${now}::bigint, ${now}::bigint, ${base}::bigint + k * ${waiting ? 0 : 1}, ${v.broadcastId},
                  -- In the trace of the request that made the broadcast (docs/tracing.md).
                  (SELECT trace_context FROM broadcasts WHERE seq = ${seq})
                FROM c ORDER BY k RETURNING 1),
        made AS (SELECT count(*)::int AS n FROM ins)
        SELECT n, CASE WHEN n > 0 THEN pg_notify(${WAKEUP_CHANNEL}, ${hint}) END FROM made`;
      const made = Number(inserted?.n ?? 0);
      // The broadcast's row lock orders the ranges' last statements: the one that takes it last
      // sees every other range's delete committed, so exactly one marks the broadcast DONE.
      const [after] = await tx<{ ranged: number }[]>`
        UPDATE broadcasts SET created = created + ${made}, updated_at = ${now} WHERE seq = ${seq} RETURNING ranged`;
      if (Number(after?.ranged) === 1) {
        await tx`UPDATE broadcasts SET status = 'DONE', pending = 0 WHERE seq = ${seq}
          AND NOT EXISTS (SELECT 1 FROM broadcast_ranges WHERE broadcast_seq = ${seq})`;
      }
      return { b, made };
    });

  const cancelSome = async (tx: Query, b: BroadcastRow, now: number, chunk: number): Promise<FanOutStep> => {
    const from = Number(b.cancelled_to);
    const [bounds] = await tx<{ n: number; last: number | null }[]>`
      SELECT count(*)::int AS n, max(seq) AS last FROM (SELECT seq FROM notifications
        WHERE tenant = ${b.tenant} AND broadcast_id = ${b.id} AND seq > ${from} ORDER BY seq LIMIT ${chunk}) c`;
    const n = Number(bounds?.n ?? 0);
    const last = bounds?.last === null || bounds?.last === undefined ? null : Number(bounds.last);
    // Ranges leased and not yet made: made by no one now (makeRange would see CANCELLED).
    await tx`DELETE FROM broadcast_ranges WHERE broadcast_seq = ${Number(b.seq)}`;
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
      // Waits for the ranges being made (their shared lock, makeRange) and for a lease holding the
      // broadcast's row, so the cancel's steps see every notification made: no range is made after.
      await sql.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(hashtextextended('broadcast:' || seq, 0))
          FROM broadcasts WHERE tenant = ${tenant} AND id = ${id}`;
        await tx`UPDATE broadcasts SET status = 'CANCELLED', pending = 1, updated_at = ${now}
          WHERE tenant = ${tenant} AND id = ${id} AND status <> 'CANCELLED'`;
      });
      return one(sql, tenant, id);
    },
    async hasWork() {
      const rows = await sql`SELECT 1 FROM broadcasts WHERE pending = 1 LIMIT 1`;
      return rows.length > 0;
    },
    async step(now, chunk, inTurn = false) {
      // First a range a dead worker left (none is leased and unmade otherwise, but for the moment
      // between a lease and its making).
      const left = await makeRange(now, inTurn);
      if (left) return stepOf(left.b, left.made, 0, false);
      const leased = await sql.begin(async (tx) => {
        // A lease locks its broadcast for its short transaction: another worker waits for it and
        // leases the next range, so no two workers ever lease one range. A broadcast all leased
        // waits for its ranges to be made, by whichever workers leased them.
        const [b] = await tx<BroadcastRow[]>`
          SELECT ${tx.unsafe(BROADCAST_COLUMNS)} FROM broadcasts WHERE pending = 1 AND (ranged = 0 OR status = 'CANCELLED')
          ORDER BY advanced_at LIMIT 1 FOR UPDATE`;
        if (!b) return null;
        if (b.status === 'CANCELLED') return { step: await cancelSome(tx, b, now, chunk) };
        await relaxed(tx);
        return lease(tx, b, now, chunk);
      });
      if (leased === null || 'step' in leased) return leased?.step ?? null;
      const made = await makeRange(now, inTurn, leased.range);
      // Taken meanwhile by another worker looking for a dead worker's range: made there.
      if (!made) return stepOf(leased.b, 0, 0, leased.ranged);
      return stepOf(made.b, made.made, 0, leased.ranged);
    },
  };
}
