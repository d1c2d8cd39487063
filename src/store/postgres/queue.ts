import { CHANNELS, type Channel, PRIORITIES } from '../../notifications/model.ts';
import type { CycleResult, QueueStat, QueueStore } from '../port/queue.ts';
import type { Sql } from './connect.ts';
import { claim } from './queue-claim.ts';
import { complete, insertEvents } from './queue-complete.ts';
import { setPaused, throttleIfPaused } from './queue-pauses.ts';

/** Waiting rows due now go back to ready keeping their seq, so a retry regains its FIFO place. */
async function promote(tx: Sql, now: number, limit: number): Promise<number> {
  const rows = await tx`
    WITH due AS MATERIALIZED (
      SELECT seq FROM notifications WHERE queue_state = 'waiting' AND due_at <= ${now}
      ORDER BY due_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
    UPDATE notifications n SET queue_state = 'ready', due_at = NULL FROM due WHERE n.seq = due.seq`;
  return rows.count;
}

/**
 * Expired leases (a worker died or stalled) go back to ready as RETRYING, or FAILED once the
 * attempts are used up. SKIP LOCKED: two workers reaping at once split the rows between them.
 */
async function reap(tx: Sql, now: number, limit: number, maxAttempts: number): Promise<number> {
  const rows = await tx<{ seq: number; attempts: number; status: string }[]>`
    WITH gone AS MATERIALIZED (
      SELECT seq FROM notifications WHERE queue_state = 'leased' AND lease_until < ${now}
      ORDER BY lease_until LIMIT ${limit} FOR UPDATE SKIP LOCKED)
    UPDATE notifications n SET
      status = CASE WHEN n.attempts >= ${maxAttempts} THEN 'FAILED' ELSE 'RETRYING' END,
      queue_state = CASE WHEN n.attempts >= ${maxAttempts} THEN NULL ELSE 'ready' END,
      lease_owner = NULL, lease_until = NULL, updated_at = ${now}
    FROM gone WHERE n.seq = gone.seq
    RETURNING n.seq, n.attempts, n.status`;
  const events = [...rows]
    .sort((a, b) => a.seq - b.seq)
    .flatMap((r) => [
      {
        seq: r.seq,
        type: 'ATTEMPT_FAILED',
        attempt: r.attempts,
        detail: 'lease expired (worker stopped or stalled)',
      },
      {
        seq: r.seq,
        type: r.status,
        attempt: r.attempts,
        detail: r.status === 'FAILED' ? 'attempts exhausted' : null,
      },
    ]);
  if (events.length > 0) await insertEvents(tx, now, events);
  return rows.length;
}

async function stats(sql: Sql): Promise<QueueStat[]> {
  const groups = await sql<
    { priority: number; channel: Channel; state: string; n: number; oldest: number }[]
  >`
    SELECT priority, channel, queue_state AS state, count(*)::int AS n, min(created_at) AS oldest
      FROM notifications WHERE queue_state IN ('ready', 'waiting', 'leased')
     GROUP BY priority, channel, queue_state`;
  const paused = await sql<{ priority: number; channel: string }[]>`
    SELECT priority, channel FROM queue_pauses WHERE resumed_at IS NULL`;
  const cells = new Map<string, QueueStat>();
  for (const [priority] of PRIORITIES.entries()) {
    for (const channel of CHANNELS) {
      cells.set(`${priority}:${channel}`, {
        priority,
        channel,
        depth: 0,
        oldestCreatedAt: null,
        inFlight: 0,
        paused: false,
      });
    }
  }
  for (const g of groups) {
    const cell = cells.get(`${g.priority}:${g.channel}`);
    if (!cell) continue;
    if (g.state === 'leased') {
      cell.inFlight = g.n;
      continue;
    }
    cell.depth += g.n;
    cell.oldestCreatedAt =
      cell.oldestCreatedAt === null ? g.oldest : Math.min(cell.oldestCreatedAt, g.oldest);
  }
  for (const p of paused) {
    const cell = cells.get(`${p.priority}:${p.channel}`);
    if (cell) cell.paused = true;
  }
  return [...cells.values()];
}

/**
 * The PostgreSQL queue. A cycle is one transaction (complete, promote, reap, claim: one commit),
 * the same split as the SQLite adapter; any number of worker processes run cycles at once.
 */
export function createPostgresQueue(sql: Sql): QueueStore {
  const inTx = <T>(work: (tx: Sql) => Promise<T>) =>
    sql.begin((tx) => work(tx as unknown as Sql)) as Promise<T>;
  return {
    cycle(input) {
      return inTx(async (tx): Promise<CycleResult> => {
        // As on SQLite (synchronous=NORMAL for the worker): a cycle's commit need not wait for
        // the WAL flush. A crash of PostgreSQL can lose only the last claims and completions,
        // which at-least-once delivery redoes (the row is still ready or leased); acceptance
        // keeps full durability, since a 201 must survive.
        await tx`SET LOCAL synchronous_commit = off`;
        const { owner, now } = input;
        const stale = input.completions.length > 0 ? await complete(tx, owner, now, input.completions) : [];
        const promoted = await promote(tx, now, input.promoteLimit ?? 1000);
        const reaped = await reap(tx, now, input.reapLimit ?? 1000, input.maxAttempts);
        const outcome = input.claim
          ? await claim(tx, owner, now, input.leaseUntil, input.claim)
          : { claimed: [], expired: 0, backlog: [false, false, false, false] };
        const [next] = await tx<{ due: number | null }[]>`
          SELECT min(due_at) AS due FROM notifications WHERE queue_state = 'waiting'`;
        return {
          ...outcome,
          applied: input.completions.length - stale.length,
          stale,
          promoted,
          reaped,
          nextDueAt: next?.due ?? null,
        };
      });
    },
    async renew(owner, leases, until) {
      if (leases.length === 0) return 0;
      const input = JSON.stringify(leases.map((l) => ({ seq: l.seq, attempt: l.attempt })));
      const rows = await sql`
        WITH l AS MATERIALIZED (SELECT * FROM json_to_recordset(${input}::text::json) AS l(seq bigint, attempt int))
        UPDATE notifications n SET lease_until = ${until} FROM l
        WHERE n.seq = l.seq AND n.lease_owner = ${owner} AND n.attempts = l.attempt AND n.queue_state = 'leased'`;
      return rows.count;
    },
    stats: () => stats(sql),
    setPaused: (selector, paused, now) => inTx((tx) => setPaused(tx, selector, paused, now)),
    throttleIfPaused: (seqs, now) =>
      seqs.length === 0 ? Promise.resolve(0) : inTx((tx) => throttleIfPaused(tx, seqs, now)),
  };
}
