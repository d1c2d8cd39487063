import { INBOX_COUNTS, PRIORITIES, type Priority, priorityRank } from '../../notifications/model.ts';
import { type ActionEffect, CANCEL, REDRIVE } from '../../notifications/status.ts';
import { isUrgent } from '../../notifications/wakeup.ts';
import { actionUpdate } from '../actions.ts';
import { filtersRows, listRange } from '../list-range.ts';
import {
  type ActionOutcome,
  columnsOf,
  type EncodedNotification,
  type IdempotentHit,
  type NotificationStore,
} from '../port/notifications.ts';
import { scannedPage } from '../port/scanned-page.ts';
import {
  type EventRow,
  eventFromRow,
  NOTIFICATION_COLUMNS,
  type NotificationRow,
  notificationFromRow,
} from '../rows.ts';
import type { Query, Sql } from './connect.ts';
import { joinRank } from './lanes.ts';
import { scanFloor } from './scan-floor.ts';
import { URGENT_PAYLOAD, WAKEUP_CHANNEL } from './wakeups.ts';

/**
 * Ingest's group commits under way at once in one process. Each holds a pooled connection while
 * it waits for its fsync; PostgreSQL flushes the WAL of the commits waiting together, so a few
 * overlapping commits take about the time of one (docs/scale-out.md).
 */
const INSERTS_AT_ONCE = 4;

const hitOf = (row: NotificationRow): IdempotentHit => ({
  record: notificationFromRow(row),
  requestHash: row.request_hash,
});

/**
 * Inserts a batch as ONE statement: the rows travel as one JSON parameter that
 * `json_to_recordset` turns back into typed rows, in batch order (so seq follows it). One
 * statement text whatever the batch size (two: with and without keys; each prepared once), no
 * 65,535-parameter ceiling, one round trip for a 1000-item batch. Rows whose idempotency key (or
 * id) is taken are skipped by ON CONFLICT, written only when the batch has a key; RETURNING says
 * which went in. The workers' wake-up hint rides on the same statement when a row went in (a
 * statement less a commit: docs/scale-out.md, "Cost per notification"); PostgreSQL delivers it
 * only when the transaction commits.
 */
async function insertRows(tx: Query, items: EncodedNotification[]): Promise<Set<string>> {
  const rows = items.map((n, ord) => {
    const waiting = n.scheduledAt !== null && n.scheduledAt > n.createdAt;
    const encoded = columnsOf(n.encoded);
    return {
      id: n.id,
      tenant: n.tenant,
      channel: n.channel,
      priority: priorityRank(n.priority),
      queue_state: waiting ? 'waiting' : 'ready',
      due_at: waiting ? n.scheduledAt : null,
      recipient: encoded.recipient,
      template_key: n.templateKey,
      template_version: n.templateVersion,
      content: encoded.content,
      variables: encoded.variables,
      metadata: encoded.metadata,
      idempotency_key: n.idempotencyKey,
      request_hash: n.requestHash,
      scheduled_at: n.scheduledAt,
      expires_at: n.expiresAt,
      created_at: n.createdAt,
      recipient_digest: encoded.recipientDigest,
      locale: n.locale ?? null,
      category: n.category ?? null,
      trace_context: n.traceContext ?? null,
      ord,
    };
  });
  // ON CONFLICT only for a batch with idempotency keys: without it each row is a plain insert,
  // where a speculative one (ON CONFLICT) costs a confirmation WAL record a row and a probe of
  // every unique index before it (#48, docs/scale-out.md). Two statement texts, each prepared once;
  // an id taken without a key is a collision either way (an error).
  const keyed = items.some((n) => n.idempotencyKey !== null);
  // Urgent when the batch has CRITICAL or HIGH rows, so a busy worker claims them at once (its urgent lane).
  const hint = items.some((n) => isUrgent(n.priority)) ? URGENT_PAYLOAD : '';
  // Ready rows join the back of their tenant's line (src/store/lanes.ts): one look-up per line in the batch,
  // then consecutive turns in batch order.
  const inserted = await tx<{ id: string | null }[]>`
    WITH t AS MATERIALIZED (
      SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::text::json) AS t(id text, tenant text,
        channel text, priority smallint, queue_state text, due_at bigint, recipient text, template_key text,
        template_version int, content text, variables text, metadata text, idempotency_key text,
        request_hash text, scheduled_at bigint, expires_at bigint, created_at bigint, recipient_digest text,
        locale text, category text, trace_context text, ord int)),
    lines AS (
      SELECT l.tenant, l.priority, l.channel, ${tx.unsafe(joinRank('l.tenant', 'l.priority', 'l.channel'))} AS base
        FROM (SELECT DISTINCT tenant, priority, channel FROM t WHERE queue_state = 'ready') l),
    ins AS (INSERT INTO notifications (id, tenant, channel, priority, status, queue_state, due_at, recipient,
      template_key, template_version, content, variables, metadata, idempotency_key, request_hash,
      scheduled_at, expires_at, attempts, created_at, updated_at, lane_rank, recipient_digest, locale, category,
      trace_context)
    SELECT t.id, t.tenant, t.channel, t.priority, 'QUEUED', t.queue_state, t.due_at, t.recipient,
      t.template_key, t.template_version, t.content, t.variables, t.metadata, t.idempotency_key,
      t.request_hash, t.scheduled_at, t.expires_at, 0, t.created_at, t.created_at,
      COALESCE(lines.base + row_number() OVER (PARTITION BY t.tenant, t.priority, t.channel, t.queue_state
        ORDER BY t.ord) - 1, 0), t.recipient_digest, t.locale, t.category, t.trace_context
    FROM t LEFT JOIN lines ON t.queue_state = 'ready' AND lines.tenant = t.tenant
      AND lines.priority = t.priority AND lines.channel = t.channel
    ORDER BY t.ord
    ${keyed ? tx`ON CONFLICT DO NOTHING` : tx``}
    RETURNING id),
    woke AS (SELECT pg_notify(${WAKEUP_CHANNEL}, ${hint}) FROM (SELECT 1 FROM ins LIMIT 1) one)
    SELECT id FROM ins UNION ALL SELECT NULL FROM woke`;
  return new Set(inserted.flatMap((row) => (row.id === null ? [] : [row.id])));
}

/** The PostgreSQL notifications store: ingest (group commit + one NOTIFY), reads, cancel, redrive. */
export function createPostgresNotifications(sql: Sql): NotificationStore {
  const byKey = async (q: Query, tenant: string, key: string) =>
    (
      await q<NotificationRow[]>`SELECT ${q.unsafe(NOTIFICATION_COLUMNS)} FROM notifications
        WHERE tenant = ${tenant} AND idempotency_key = ${key}`
    )[0];

  /** Idempotency conflicts, one by one as SQLite does: reuse a live key, release an expired one. */
  const resolveConflict = async (tx: Query, n: EncodedNotification, since: number) => {
    if (n.idempotencyKey === null) throw new Error(`notification id collision: ${n.id}`);
    const existing = await byKey(tx, n.tenant, n.idempotencyKey);
    if (!existing) throw new Error(`notification id collision: ${n.id}`);
    if (existing.created_at >= since) return hitOf(existing);
    await tx`UPDATE notifications SET idempotency_key = NULL WHERE seq = ${existing.seq}`;
    const again = await insertRows(tx, [n]);
    if (!again.has(n.id)) throw new Error(`notification id collision: ${n.id}`);
    return undefined;
  };

  /** Applies an action status.ts decided (CANCEL, REDRIVE) and writes its event. */
  const act = (effect: ActionEffect) => {
    const update = actionUpdate(effect, joinRank, { now: '$1', id: '$2', tenant: '$3' });
    const { type, detail, source } = effect.event;
    return (tenant: string, id: string, now: number) =>
      sql.begin(async (tx): Promise<ActionOutcome> => {
        const [row] = await tx.unsafe<{ seq: number; priority: number }[]>(update, [now, id, tenant]);
        if (!row) {
          const [found] = await tx`SELECT 1 FROM notifications WHERE id = ${id} AND tenant = ${tenant}`;
          return found ? 'invalid_state' : 'not_found';
        }
        await tx`INSERT INTO notification_events (notification_seq, type, at, attempt, provider, detail, source)
                 VALUES (${row.seq}, ${type}, ${now}, NULL, NULL, ${detail}, ${source})`;
        // A row back in the queue wakes the workers (a CRITICAL or HIGH one, their urgent lanes).
        if (effect.queueState === 'ready') {
          const hint = isUrgent(PRIORITIES[row.priority] as Priority) ? URGENT_PAYLOAD : '';
          await tx`SELECT pg_notify(${WAKEUP_CHANNEL}, ${hint})`;
        }
        return 'done';
      });
  };

  return {
    insertsAtOnce: INSERTS_AT_ONCE,
    async insertMany(items, since) {
      if (items.length === 0) return [];
      // Without an Idempotency-Key no row can be skipped: the one statement is the transaction
      // (PostgreSQL commits a statement sent alone as one), all rows or none, one round trip
      // instead of BEGIN, the statement and COMMIT. With a key, a skipped row is resolved in the
      // same transaction as the rest, so the group's answer is all or nothing either way.
      if (items.every((n) => n.idempotencyKey === null)) {
        await insertRows(sql, items);
        return items.map(() => undefined);
      }
      return sql.begin(async (tx) => {
        const inserted = await insertRows(tx, items);
        const answer: Array<IdempotentHit | undefined> = [];
        for (const n of items) {
          answer.push(inserted.has(n.id) ? undefined : await resolveConflict(tx, n, since));
        }
        return answer;
      });
    },
    async findIdempotent(tenant, key, since) {
      const row = await byKey(sql, tenant, key);
      return row && row.created_at >= since ? hitOf(row) : null;
    },
    async get(tenant, id) {
      const [row] = await sql<NotificationRow[]>`SELECT ${sql.unsafe(NOTIFICATION_COLUMNS)} FROM notifications
        WHERE id = ${id} AND tenant = ${tenant}`;
      if (!row) return null;
      const events = await sql<EventRow[]>`SELECT type, at, attempt, provider, detail, source, locale
        FROM notification_events WHERE notification_seq = ${row.seq} AND type <> ${INBOX_COUNTS} ORDER BY id`;
      return { record: notificationFromRow(row), events: events.map(eventFromRow) };
    },
    async existing(tenant, ids) {
      const rows = await sql<{ id: string }[]>`SELECT id FROM notifications
        WHERE tenant = ${tenant} AND id = ANY(${ids as string[]}::text[])`;
      return new Set(rows.map((r) => r.id));
    },
    async list(tenant, filter, limit) {
      const f = filter;
      const { below, above } = await listRange(
        f,
        async (key) => {
          const [row] = await sql<{ seq: number; created_at: number }[]>`
            SELECT seq, created_at FROM notifications WHERE tenant = ${tenant} AND seq > ${Number(key)}
             ORDER BY seq LIMIT 1`;
          return row && { key: BigInt(row.seq), at: row.created_at };
        },
        async () => {
          const [row] = await sql<{ seq: number }[]>`
            SELECT seq FROM notifications WHERE tenant = ${tenant} ORDER BY seq DESC LIMIT 1`;
          return row?.seq;
        },
      );
      // A searched recipient or broadcast is part of the range: its index holds the tenant's notifications to
      // it, or made by it.
      const range = sql`tenant = ${tenant}
        ${f.recipientDigest === undefined ? sql`` : sql`AND recipient_digest = ${f.recipientDigest}`}
        ${f.broadcastId === undefined ? sql`` : sql`AND broadcast_id = ${f.broadcastId}`}
        ${below === undefined ? sql`` : sql`AND seq < ${below}`}
        ${above === undefined ? sql`` : sql`AND seq > ${above}`}`;
      const filtered = filtersRows(f);
      // With a filter, the read looks at the next LIST_SCAN of the tenant's notifications at most.
      const floor = filtered ? await scanFloor(sql, 'notifications', 'seq', range) : undefined;
      const rows = await sql<NotificationRow[]>`
        SELECT ${sql.unsafe(NOTIFICATION_COLUMNS)} FROM notifications WHERE ${range}
          ${floor === undefined ? sql`` : sql`AND seq >= ${floor}`}
          ${f.status === undefined ? sql`` : sql`AND status = ${f.status}`}
          ${f.priority === undefined ? sql`` : sql`AND priority = ${priorityRank(f.priority)}`}
          ${f.channel === undefined ? sql`` : sql`AND channel = ${f.channel}`}
          ${f.createdAfter === undefined ? sql`` : sql`AND created_at > ${f.createdAfter}`}
          ${f.createdBefore === undefined ? sql`` : sql`AND created_at < ${f.createdBefore}`}
        ORDER BY seq DESC LIMIT ${limit}`;
      const items = rows.map(notificationFromRow);
      return scannedPage(items, limit, floor);
    },
    cancel: act(CANCEL),
    redrive: act(REDRIVE),
  };
}
