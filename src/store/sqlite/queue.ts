import { PRIORITIES } from '../../notifications/model.ts';
import type { ExpiredLease, PauseEntry } from '../../notifications/status.ts';
import type { QueueStore } from '../port/queue.ts';
import {
  type AppliedRow,
  cellsOf,
  cycleProgram,
  promotionTurns,
  type QueueDriver,
  type QueueGroup,
  runSync,
  statsGrid,
  walkTenants,
} from '../queue-core.ts';
import { storeInboxSync } from './inbox.ts';
import { frontRank, promote, readyIndexed } from './lanes.ts';
import { relaxedSync, type SqliteDb } from './open.ts';
import { createSqliteOutcomeCounter } from './outcome-counts.ts';
import { createClaimPriority } from './queue-claim.ts';
import { categoriesAmongSync, dropPushTargetsSync, recipientsAmongSync } from './recipients.ts';
import { shaped } from './shaped.ts';
import { addSuppressionsSync, matchSuppressionsSync } from './suppressions.ts';

const json = (value: unknown) => JSON.stringify(value);

/** The updated row's rank, priority and channel, for the lane rules. */
const ROW = ['notifications.lane_rank', 'notifications.priority', 'notifications.channel'] as const;

/** The queue's primitives as SQLite statements, prepared once; each runs inside the cycle's transaction. */
function createDriver(db: SqliteDb): QueueDriver {
  // The fence: a transition applies only while the row is still leased to this owner at this
  // attempt, so a worker whose lease expired (and was re-claimed) cannot overwrite the newer one.
  // Two statements rather than one with CASEs: SQLite maintains only the indexes whose columns
  // an UPDATE sets, so the hot path (a send) sets no more columns than it changes.
  const FENCE =
    "WHERE seq = ? AND lease_owner = ? AND attempts = ? AND queue_state = 'leased' RETURNING seq, id, tenant, channel";
  const sent = shaped<AppliedRow>(
    db.prepare(
      `UPDATE notifications SET status = ?, queue_state = ?, next_attempt_at = ?, provider = ?,
         provider_message_id = ?, address_key = ?, holds = 0, lease_owner = NULL, lease_until = NULL,
         updated_at = max(?, created_at) ${FENCE}`,
    ),
  );
  // A row given back to ready (a hold, an expired lease) had its turn: front of the line, its
  // rank read before the batch changes any row (`front`), as PostgreSQL's one statement sees it.
  const other = shaped<AppliedRow>(
    db.prepare(
      `UPDATE notifications SET status = ?, queue_state = ?, due_at = ?, next_attempt_at = ?,
         attempts = attempts + ?, holds = CASE WHEN ? THEN holds + 1 ELSE 0 END, provider = COALESCE(?, provider),
         lane_rank = COALESCE(?, lane_rank), lease_owner = NULL, lease_until = NULL,
         updated_at = max(?, created_at) ${FENCE}`,
    ),
  );
  const front = db.prepare(`SELECT ${frontRank(...ROW)} FROM notifications WHERE seq = ?`).pluck();
  const event = db.prepare(
    `INSERT INTO notification_events (notification_seq, type, at, attempt, provider, detail, source, locale)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const copy = db.prepare(
    `INSERT INTO sandbox_messages (notification_seq, notification_id, tenant, channel, recipient, content, attempt, at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  // Waiting rows go back to ready (promote in queue-core.ts): in a tenant's turn, a seek for the
  // next tenant and a range of its due rows in the (priority, tenant, due_at) index; then in due
  // order, a range of the (priority, due_at) index. They are ranked as src/store/lanes.ts says,
  // in one statement (promote) written once for both databases: a retry or a hold regains its
  // place at the front, a scheduled row joins its tenant's line.
  const due = db
    .prepare(
      `SELECT seq FROM notifications WHERE queue_state = 'waiting' AND priority = ? AND due_at <= ?
       ORDER BY due_at, seq LIMIT ?`,
    )
    .pluck();
  // How many rows are due, counting up to a given number.
  const dueUpTo = db
    .prepare(
      `SELECT COUNT(*) FROM (SELECT 1 FROM notifications
         WHERE queue_state = 'waiting' AND priority = ? AND due_at <= ? LIMIT ?)`,
    )
    .pluck();
  // How many rows of a cell are ready, counting up to a given number (a range of the ready index),
  // and how many of those since before a given time.
  const readyUpTo = db.prepare(
    `SELECT COUNT(*) AS ready, COALESCE(SUM(updated_at < ?), 0) AS waited FROM (SELECT updated_at
       FROM notifications WHERE ${readyIndexed()} AND priority = ? AND channel = ?
       ORDER BY lane_rank, seq LIMIT ?)`,
  );
  // The next tenant's first entry, which holds its earliest due_at.
  const nextTenant = db.prepare(
    `SELECT tenant, due_at FROM notifications WHERE queue_state = 'waiting' AND priority = ? AND tenant > ?
     ORDER BY tenant, due_at LIMIT 1`,
  );
  const tenantDue = db
    .prepare(
      `SELECT seq FROM notifications WHERE queue_state = 'waiting' AND priority = ? AND tenant = ? AND due_at <= ?
       ORDER BY due_at, seq LIMIT ?`,
    )
    .pluck();
  const promoteRows = db.prepare(promote('SELECT value FROM json_each(?)', ''));
  const promoteAll = (seqs: readonly number[]) =>
    seqs.length === 0 ? 0 : promoteRows.run(JSON.stringify(seqs)).changes;
  const expiredLeases = db.prepare(
    `SELECT seq, lease_owner AS owner, attempts FROM notifications
     WHERE queue_state = 'leased' AND lease_until < ? ORDER BY lease_until, seq LIMIT ?`,
  );
  const pauses = db.prepare(
    'SELECT priority, channel, paused_at AS pausedAt, resumed_at AS resumedAt FROM queue_pauses ORDER BY id DESC LIMIT ?',
  );
  const hasThrottled = db.prepare(
    "SELECT 1 FROM notification_events WHERE notification_seq = ? AND type = 'THROTTLED' AND at >= ? LIMIT 1",
  );
  const nextDue = db.prepare("SELECT MIN(due_at) FROM notifications WHERE queue_state = 'waiting'").pluck();
  const recentPauses = (limit: number) => pauses.all(limit) as PauseEntry[];
  const claimPriority = createClaimPriority(db, recentPauses);
  return {
    transition(transitions, now) {
      const applied: AppliedRow[] = [];
      const ranks = transitions.map((t) =>
        t.change.queueState === 'ready' ? (front.get(t.seq) as number | undefined) : undefined,
      );
      for (const [i, t] of transitions.entries()) {
        const c = t.change;
        const fence = [t.seq, t.owner, t.attempt];
        const row = c.sent
          ? sent.get(
              c.status,
              c.queueState,
              c.nextAttemptAt,
              c.sent.provider,
              c.sent.providerMessageId,
              c.sent.addressKey,
              now,
              ...fence,
            )
          : other.get(
              c.status,
              c.queueState,
              c.dueAt,
              c.nextAttemptAt,
              c.attemptsDelta,
              c.hold ? 1 : 0,
              c.tried ?? null,
              ranks[i] ?? null,
              now,
              ...fence,
            );
        if (row) applied.push(row);
      }
      return applied;
    },
    appendEvents(events, now) {
      for (const e of events) {
        event.run(
          e.seq,
          e.type,
          e.at ?? now,
          e.attempt ?? null,
          e.provider ?? null,
          e.detail ?? null,
          e.source ?? null,
          e.locale ?? null,
        );
      }
    },
    storeCopies(copies, now) {
      for (const c of copies) {
        copy.run(c.seq, c.id, c.tenant, c.channel, json(c.recipient), json(c.content), c.attempt, now);
      }
    },
    storeInbox: (entries, now) => storeInboxSync(db, entries, now),
    suppress(entries, now) {
      addSuppressionsSync(db, entries, now);
    },
    suppressions: (keys) => matchSuppressionsSync(db, keys),
    recipients: (keys) => recipientsAmongSync(db, keys),
    categories: (keys) => categoriesAmongSync(db, keys),
    dropPushTargets: (gone, now) => dropPushTargetsSync(db, gone, now),
    countOutcomes: createSqliteOutcomeCounter(db),
    dueCounts: (now, upTo) => PRIORITIES.map((_, priority) => dueUpTo.get(priority, now, upTo) as number),
    promoteTurn(priority, now, turn) {
      // The walk's rows are gathered and promoted in one statement, as on PostgreSQL (a statement
      // per tenant cost a step of 1,000 rows over 64 tenants 40 % more than one).
      const { taken, last } = walkTenants(
        now,
        turn,
        (after) => nextTenant.get(priority, after) as { tenant: string; due_at: number } | undefined,
        (tenant, n) => tenantDue.all(priority, tenant, now, n) as number[],
      );
      return { promoted: promoteAll(taken), last };
    },
    promoteDue: (priority, now, limit) => promoteAll(due.all(priority, now, limit) as number[]),
    expiredLeases: (now, limit) => expiredLeases.all(now, limit) as ExpiredLease[],
    claimPriority,
    readyCount(priority, channels, upTo, before) {
      let ready = 0;
      let waited = 0;
      for (const channel of channels) {
        const row = readyUpTo.get(before, priority, channel, upTo) as { ready: number; waited: number };
        ready += row.ready;
        waited += row.waited;
      }
      return { ready, waited };
    },
    pauses: recentPauses,
    hasThrottled: (seq, since) => hasThrottled.get(seq, since) !== undefined,
    nextDueAt: () => (nextDue.get() as number | null) ?? null,
  };
}

/**
 * The queue's groups for stats(), of every tenant or of one. Ready groups read MIN(seq), an index
 * seek (for one tenant, a range of its line index), then that row's created_at.
 */
function createStats(db: SqliteDb) {
  // `ready` picks the ready rows (all or a tenant's); `other` narrows the other states' to a tenant.
  const statements = (ready: string, other: string) => ({
    ready: db.prepare(
      `SELECT priority, channel, COUNT(*) AS n, MIN(seq) AS first FROM notifications
       WHERE ${ready} GROUP BY priority, channel`,
    ),
    // One query per state, each answered from that state's partial index: a single
    // `queue_state IN (...)` query cannot use them and scans the whole table (measured: a scan of
    // 200,000 rows on every /admin/queues poll cost the worker in the same process ~15 % of its rate).
    waiting: db.prepare(
      `SELECT priority, channel, CASE WHEN due_at > @now THEN 'scheduled' ELSE 'waiting' END AS state,
         COUNT(*) AS n, MIN(created_at) AS oldest FROM notifications
       WHERE queue_state = 'waiting'${other} GROUP BY priority, channel, state`,
    ),
    leased: db.prepare(
      `SELECT priority, channel, 'leased' AS state, COUNT(*) AS n, NULL AS oldest FROM notifications
       WHERE queue_state = 'leased'${other} GROUP BY priority, channel`,
    ),
  });
  const all = statements(readyIndexed(), '');
  // A tenant's ready rows are a range of its line index (tenant, priority, channel, lane_rank),
  // partial to ready rows and covering. For the other states `+tenant` keeps SQLite on the state's
  // partial index: by `tenant` it would pick (tenant, seq) and read every notification the tenant
  // ever sent.
  const ofTenant = statements("queue_state = 'ready' AND tenant = @tenant", ' AND +tenant = @tenant');
  // Seq follows acceptance, so the smallest ready seq is the oldest ready row.
  const createdAt = db.prepare('SELECT created_at FROM notifications WHERE seq = ?').pluck();
  const paused = db.prepare('SELECT priority, channel FROM queue_pauses WHERE resumed_at IS NULL');
  return db.transaction((tenant: string | undefined, now: number) => {
    const { ready, waiting, leased } = tenant === undefined ? all : ofTenant;
    const args = tenant === undefined ? [] : [{ tenant }];
    const groups: QueueGroup[] = (
      ready.all(...args) as Array<{ priority: number; channel: string; n: number; first: number }>
    ).map((g) => ({ ...g, state: 'ready', oldest: createdAt.get(g.first) as number }));
    groups.push(
      ...(waiting.all({ now, ...(tenant === undefined ? {} : { tenant }) }) as QueueGroup[]),
      ...(leased.all(...args) as QueueGroup[]),
    );
    return statsGrid(groups, paused.all() as Array<{ priority: number; channel: string }>);
  });
}

/** The SQLite queue: every cycle is one IMMEDIATE transaction (one commit, one fsync). */
export function createSqliteQueue(db: SqliteDb): QueueStore {
  const driver = createDriver(db);
  const turns = promotionTurns();
  const cycle = db.transaction((input: Parameters<QueueStore['cycle']>[0]) =>
    runSync(cycleProgram(input, turns), driver),
  );
  const renew = db.prepare(
    "UPDATE notifications SET lease_until = ? WHERE seq = ? AND lease_owner = ? AND attempts = ? AND queue_state = 'leased'",
  );
  const renewAll = db.transaction(
    (owner: string, leases: Parameters<QueueStore['renew']>[1], until: number) => {
      let n = 0;
      for (const lease of leases) n += renew.run(until, lease.seq, owner, lease.attempt).changes;
      return n;
    },
  );
  const pause = db.prepare(
    'INSERT INTO queue_pauses (priority, channel, paused_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
  );
  const resume = db.prepare(
    'UPDATE queue_pauses SET resumed_at = ? WHERE priority = ? AND channel = ? AND resumed_at IS NULL',
  );
  const setPaused = db.transaction((cells: ReturnType<typeof cellsOf>, paused: boolean, now: number) => {
    for (const { priority, channel } of cells) {
      if (paused) pause.run(priority, channel, now);
      else resume.run(now, priority, channel);
    }
  });
  const stats = createStats(db);
  const relaxed = relaxedSync(db);
  return {
    async cycle(input) {
      return relaxed(() => cycle.immediate(input));
    },
    async renew(owner, leases, until) {
      if (leases.length === 0) return 0;
      return relaxed(() => renewAll.immediate(owner, leases, until));
    },
    async stats(tenant, now = Number.MAX_SAFE_INTEGER) {
      return stats(tenant, now);
    },
    async setPaused(selector, paused, now) {
      setPaused.immediate(cellsOf(selector), paused, now);
    },
  };
}
