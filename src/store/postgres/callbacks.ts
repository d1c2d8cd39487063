import { attemptOf, type CallbackStore, type NewAttempt } from '../port/callbacks.ts';
import {
  type AttemptRow,
  attemptFromRow,
  type CallbackRow,
  callbackFromRow,
  type LeasedRow,
  leasedFromRow,
} from '../rows-status.ts';
import type { Query, Sql } from './connect.ts';

const json = (value: unknown) => JSON.stringify(value);

/** Records attempts (GET /callbacks/{id}/deliveries) in one statement of the caller's transaction. */
async function insertAttempts(tx: Query, attempts: readonly NewAttempt[], now: number): Promise<void> {
  if (attempts.length === 0) return;
  await tx`INSERT INTO callback_attempts (callback_id, message_id, notification_id, attempt, status_code, error, at)
    SELECT "callbackId", "messageId", "notificationId", attempt, "statusCode", error, ${now}::bigint
    FROM json_to_recordset(${json(attempts)}::text::json)
      AS a("callbackId" text, "messageId" text, "notificationId" text, attempt int, "statusCode" int, error text)`;
}

/**
 * The PostgreSQL callbacks store. Several workers send: a claim locks its messages with
 * FOR UPDATE SKIP LOCKED and leases them, so each attempt is made by exactly one worker, and
 * the order rule (no message while an earlier one of its notification is pending) holds across
 * workers because a leased message stays pending until its attempt is recorded.
 */
export function createPostgresCallbacks(sql: Sql): CallbackStore {
  return {
    async create(c, cursor, perTenant) {
      return sql.begin(async (tx) => {
        // One tenant's creations take turns, so two at once cannot both pass the count.
        await tx`SELECT pg_advisory_xact_lock(hashtext('callbacks'), hashtext(${c.tenant}))`;
        const [row] = await tx<
          { n: number }[]
        >`SELECT count(*)::int AS n FROM callbacks WHERE tenant = ${c.tenant}`;
        if ((row?.n ?? 0) >= perTenant) return false;
        await tx`INSERT INTO callbacks (id, tenant, url, events, secret, created_at, cursor)
          VALUES (${c.id}, ${c.tenant}, ${c.url}, ${json(c.events)}, ${c.secret}, ${c.createdAt}, ${cursor})`;
        return true;
      });
    },
    async list(tenant) {
      const rows = await sql<
        CallbackRow[]
      >`SELECT * FROM callbacks WHERE tenant = ${tenant} ORDER BY created_at, id`;
      return rows.map(callbackFromRow);
    },
    async get(tenant, id) {
      const [row] = await sql<CallbackRow[]>`SELECT * FROM callbacks WHERE tenant = ${tenant} AND id = ${id}`;
      return row && callbackFromRow(row);
    },
    async enabled() {
      const rows = await sql<
        CallbackRow[]
      >`SELECT * FROM callbacks WHERE disabled_at IS NULL ORDER BY created_at, id`;
      return rows.map(callbackFromRow);
    },
    async remove(tenant, id) {
      return sql.begin(async (tx) => {
        const gone = await tx`DELETE FROM callbacks WHERE tenant = ${tenant} AND id = ${id}`;
        if (gone.count === 0) return false;
        // Its pending messages (an index range); the rest is pruned by age (see the SQLite adapter).
        await tx`DELETE FROM callback_messages WHERE callback_id = ${id} AND state = 'pending'`;
        await tx`DELETE FROM callback_attempts WHERE callback_id = ${id}`;
        return true;
      });
    },
    async rotateSecret(tenant, id, secret, now) {
      const done =
        await sql`UPDATE callbacks SET previous_secret = secret, secret = ${secret}, rotated_at = ${now}
        WHERE tenant = ${tenant} AND id = ${id}`;
      return done.count > 0;
    },
    async disable(id, reason, now) {
      await sql.begin(async (tx) => {
        await tx`UPDATE callbacks SET disabled_at = ${now}, disabled_reason = ${reason}
          WHERE id = ${id} AND disabled_at IS NULL`;
        await tx`UPDATE callback_messages SET state = 'failed' WHERE callback_id = ${id} AND state = 'pending'`;
      });
    },
    async leaseHead(id, owner, now, until) {
      const [row] = await sql<{ cursor: string }[]>`UPDATE callbacks
          SET head_owner = ${owner}, head_lease_until = ${until}
        WHERE id = ${id} AND disabled_at IS NULL
          AND (head_owner IS NULL OR head_owner = ${owner} OR head_lease_until <= ${now})
        RETURNING cursor`;
      return row?.cursor;
    },
    async advance(id, owner, from, to, progress, now, until) {
      return sql.begin(async (tx) => {
        const moved = await tx`UPDATE callbacks SET cursor = ${to}, head_lease_until = ${until}
          WHERE id = ${id} AND head_owner = ${owner} AND cursor = ${from}`;
        if (moved.count === 0) return false;
        await insertAttempts(tx, progress.attempts, now);
        if (progress.waiting.length > 0) {
          await tx`INSERT INTO callback_messages (id, callback_id, notification_id, body, state, attempts, due_at, created_at,
              trace_context)
            SELECT id, "callbackId", "notificationId", body, 'pending', attempts, "dueAt", "createdAt", "traceContext"
            FROM json_to_recordset(${json(progress.waiting)}::text::json)
              AS m(id text, "callbackId" text, "notificationId" text, body text, attempts int, "dueAt" bigint, "createdAt" bigint,
                "traceContext" text)
            ON CONFLICT (id) DO NOTHING`;
        }
        return true;
      });
    },
    async pendingAmong(id, notificationIds) {
      if (notificationIds.length === 0) return new Set();
      const rows = await sql<
        { notification_id: string }[]
      >`SELECT DISTINCT notification_id FROM callback_messages
        WHERE callback_id = ${id} AND state = 'pending' AND notification_id = ANY(${notificationIds as string[]}::text[])`;
      return new Set(rows.map((row) => row.notification_id));
    },
    async dueCallbacks(now, limit) {
      // One index seek per enabled callback, never a scan of the outbox (see the SQLite adapter).
      const rows = await sql<
        { id: string }[]
      >`SELECT c.id FROM callbacks c WHERE c.disabled_at IS NULL AND EXISTS (
          SELECT 1 FROM callback_messages m WHERE m.callback_id = c.id AND m.state = 'pending'
             AND m.due_at <= ${now} AND (m.lease_until IS NULL OR m.lease_until <= ${now}))
        ORDER BY c.created_at, c.id LIMIT ${limit}`;
      return rows.map((row) => row.id);
    },
    async claim(callbackId, owner, now, leaseUntil, limit) {
      const rows = await sql<LeasedRow[]>`WITH c AS (
          SELECT m.seq FROM callback_messages m
           WHERE m.callback_id = ${callbackId} AND m.state = 'pending' AND m.due_at <= ${now}
             AND (m.lease_until IS NULL OR m.lease_until <= ${now})
             AND NOT EXISTS (SELECT 1 FROM callback_messages p WHERE p.callback_id = m.callback_id
                   AND p.notification_id = m.notification_id AND p.state = 'pending' AND p.seq < m.seq)
           ORDER BY m.due_at, m.seq LIMIT ${limit}
           FOR UPDATE SKIP LOCKED)
        UPDATE callback_messages m SET lease_owner = ${owner}, lease_until = ${leaseUntil}, attempts = m.attempts + 1
          FROM c WHERE m.seq = c.seq
        RETURNING m.id, m.callback_id, m.notification_id, m.body, m.attempts, m.created_at, m.trace_context`;
      return rows.map(leasedFromRow);
    },
    async complete(owner, attempts, now) {
      if (attempts.length === 0) return;
      const outcomes = attempts.map(({ message, outcome }) => ({
        id: message.id,
        attempt: message.attempt,
        state: outcome.kind === 'retry' ? 'pending' : outcome.kind,
        due: outcome.kind === 'retry' ? outcome.retryAt : now,
      }));
      await sql.begin(async (tx) => {
        await tx`UPDATE callback_messages m SET state = a.state, due_at = a.due, lease_owner = NULL, lease_until = NULL
          FROM json_to_recordset(${json(outcomes)}::text::json) AS a(id text, attempt int, state text, due bigint)
          WHERE m.id = a.id AND m.lease_owner = ${owner} AND m.attempts = a.attempt AND m.state = 'pending'`;
        await insertAttempts(tx, attempts.map(attemptOf), now);
      });
    },
    async prune(before, limit) {
      // The oldest rows by key (see the SQLite adapter): never a scan of the whole table.
      const attempts = await sql`DELETE FROM callback_attempts WHERE id IN (
          SELECT id FROM callback_attempts ORDER BY id LIMIT ${limit}) AND at < ${before}`;
      const messages = await sql`DELETE FROM callback_messages WHERE seq IN (
          SELECT seq FROM callback_messages ORDER BY seq LIMIT ${limit})
        AND created_at < ${before} AND state <> 'pending'`;
      return attempts.count + messages.count;
    },
    async deliveries(tenant, id, before, limit) {
      const [owned] = await sql`SELECT 1 FROM callbacks WHERE tenant = ${tenant} AND id = ${id}`;
      if (!owned) return undefined;
      const rows = await sql<AttemptRow[]>`SELECT * FROM callback_attempts
        WHERE callback_id = ${id} AND id < ${before ?? Number.MAX_SAFE_INTEGER} ORDER BY id DESC LIMIT ${limit}`;
      return rows.map(attemptFromRow);
    },
  };
}
