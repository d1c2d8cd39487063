import { CHANNELS, type Channel, PRIORITIES } from '../../notifications/model.ts';
import type { CycleInput, CycleResult, QueueStat, QueueStore } from '../port/queue.ts';
import type { SqliteDb } from './open.ts';
import { createClaimer } from './queue-claim.ts';
import { createCompleter } from './queue-complete.ts';
import { createPauses } from './queue-pauses.ts';

/** Promotes due waiting rows and returns expired leases, both bounded per cycle. */
function createMaintenance(db: SqliteDb) {
  // Waiting rows go back to ready keeping their seq, so a retry regains its FIFO place once due.
  const promote = db.prepare(
    `UPDATE notifications SET queue_state = 'ready', due_at = NULL WHERE seq IN (
       SELECT seq FROM notifications WHERE queue_state = 'waiting' AND due_at <= ? ORDER BY due_at LIMIT ?)`,
  );
  const expiredLeases = db.prepare(
    `SELECT seq, attempts, lease_owner FROM notifications
     WHERE queue_state = 'leased' AND lease_until < ? ORDER BY lease_until LIMIT ?`,
  );
  const reap = db.prepare(
    `UPDATE notifications SET status = ?, queue_state = ?, lease_owner = NULL, lease_until = NULL, updated_at = ?
     WHERE seq = ? AND lease_owner = ? AND attempts = ? AND queue_state = 'leased' AND lease_until < ?`,
  );
  const event = db.prepare(
    'INSERT INTO notification_events (notification_seq, type, at, attempt, detail) VALUES (?, ?, ?, ?, ?)',
  );
  const nextDue = db.prepare("SELECT MIN(due_at) FROM notifications WHERE queue_state = 'waiting'").pluck();
  return {
    promote: (now: number, limit: number) => promote.run(now, limit).changes,
    reap(now: number, limit: number, maxAttempts: number): number {
      const rows = expiredLeases.all(now, limit) as Array<{
        seq: number;
        attempts: number;
        lease_owner: string;
      }>;
      let reaped = 0;
      for (const row of rows) {
        const exhausted = row.attempts >= maxAttempts;
        const [status, state] = exhausted ? ['FAILED', null] : ['RETRYING', 'ready'];
        if (reap.run(status, state, now, row.seq, row.lease_owner, row.attempts, now).changes === 0) continue;
        event.run(row.seq, 'ATTEMPT_FAILED', now, row.attempts, 'lease expired (worker stopped or stalled)');
        event.run(row.seq, status, now, row.attempts, exhausted ? 'attempts exhausted' : null);
        reaped++;
      }
      return reaped;
    },
    nextDueAt: () => (nextDue.get() as number | null) ?? null,
  };
}

function createStats(db: SqliteDb) {
  const ready = db.prepare(
    `SELECT priority, channel, COUNT(*) AS n, MIN(seq) AS first FROM notifications
     WHERE queue_state = 'ready' GROUP BY priority, channel`,
  );
  const waiting = db.prepare(
    `SELECT priority, channel, COUNT(*) AS n, MIN(created_at) AS oldest FROM notifications
     WHERE queue_state = 'waiting' GROUP BY priority, channel`,
  );
  const leased = db.prepare(
    `SELECT priority, channel, COUNT(*) AS n FROM notifications WHERE queue_state = 'leased' GROUP BY priority, channel`,
  );
  const createdAt = db.prepare('SELECT created_at FROM notifications WHERE seq = ?').pluck();
  const paused = db.prepare('SELECT priority, channel FROM queue_pauses WHERE resumed_at IS NULL');
  type Group = { priority: number; channel: string; n: number; first?: number; oldest?: number };
  return db.transaction((): QueueStat[] => {
    const stats = new Map<string, QueueStat>();
    for (const [priority] of PRIORITIES.entries()) {
      for (const channel of CHANNELS) {
        stats.set(`${priority}:${channel}`, {
          priority,
          channel,
          depth: 0,
          oldestCreatedAt: null,
          inFlight: 0,
          paused: false,
        });
      }
    }
    const cell = (g: { priority: number; channel: string }) => stats.get(`${g.priority}:${g.channel}`);
    const older = (a: number | null, b: number) => (a === null || b < a ? b : a);
    for (const g of ready.all() as Group[]) {
      const s = cell(g);
      if (!s) continue;
      s.depth += g.n;
      // Seq follows acceptance, so the smallest ready seq is the oldest ready row.
      s.oldestCreatedAt = older(s.oldestCreatedAt, createdAt.get(g.first) as number);
    }
    for (const g of waiting.all() as Group[]) {
      const s = cell(g);
      if (!s) continue;
      s.depth += g.n;
      s.oldestCreatedAt = older(s.oldestCreatedAt, g.oldest as number);
    }
    for (const g of leased.all() as Group[]) {
      const s = cell(g);
      if (s) s.inFlight = g.n;
    }
    for (const g of paused.all() as Array<{ priority: number; channel: Channel }>) {
      const s = cell(g);
      if (s) s.paused = true;
    }
    return [...stats.values()];
  });
}

/**
 * Runs the worker's own transactions with synchronous=NORMAL instead of FULL. In WAL mode a NORMAL
 * commit survives a process crash (kill -9: the frames are in the OS already); only a power cut
 * can lose the latest ones, and what they held (claims, completions, renewals) is redone by
 * at-least-once delivery: the row is still ready or leased, so it is sent again. Acceptance keeps
 * FULL (a 201 must survive a power cut), and its next fsync of the WAL flushes these frames too.
 * Measured on the dev VM: a FULL commit waits ~4.5 ms for fsync, a NORMAL one ~0.1 ms, which is
 * most of a claim's latency and of the worker's per-cycle cost.
 */
function relaxedSync(db: SqliteDb) {
  const level = db.prepare('PRAGMA synchronous').pluck();
  const normal = db.prepare('PRAGMA synchronous = NORMAL');
  const full = db.prepare('PRAGMA synchronous = FULL');
  return <T>(work: () => T): T => {
    // 2 = FULL, 3 = EXTRA; anything lower (a bench's OFF) is left as it is.
    if ((level.get() as number) < 2) return work();
    normal.run();
    try {
      return work();
    } finally {
      full.run();
    }
  };
}

/** The SQLite queue: every cycle is one IMMEDIATE transaction (one commit, one fsync). */
export function createSqliteQueue(db: SqliteDb): QueueStore {
  const pauses = createPauses(db);
  const claim = createClaimer(db, pauses);
  const complete = createCompleter(db);
  const maintenance = createMaintenance(db);
  const stats = createStats(db);
  const renew = db.prepare(
    "UPDATE notifications SET lease_until = ? WHERE seq = ? AND lease_owner = ? AND attempts = ? AND queue_state = 'leased'",
  );
  const cycle = db.transaction((input: CycleInput): CycleResult => {
    const { owner, now } = input;
    const stale = input.completions.length > 0 ? complete(owner, now, input.completions) : [];
    const promoted = maintenance.promote(now, input.promoteLimit ?? 1000);
    const reaped = maintenance.reap(now, input.reapLimit ?? 1000, input.maxAttempts);
    const outcome = input.claim
      ? claim(owner, now, input.leaseUntil, input.claim)
      : { claimed: [], expired: 0, backlog: [false, false, false, false] };
    return {
      ...outcome,
      applied: input.completions.length - stale.length,
      stale,
      promoted,
      reaped,
      nextDueAt: maintenance.nextDueAt(),
    };
  });
  const renewAll = db.transaction((owner: string, leases: CycleInput['completions'], until: number) => {
    let n = 0;
    for (const lease of leases) n += renew.run(until, lease.seq, owner, lease.attempt).changes;
    return n;
  });
  const relaxed = relaxedSync(db);
  const setPaused = db.transaction(pauses.set);
  const throttle = db.transaction(pauses.throttleIfPaused);
  return {
    async cycle(input) {
      return relaxed(() => cycle.immediate(input));
    },
    async renew(owner, leases, until) {
      if (leases.length === 0) return 0;
      return relaxed(() => renewAll.immediate(owner, leases as CycleInput['completions'], until));
    },
    async stats() {
      return stats();
    },
    async setPaused(selector, paused, now) {
      setPaused.immediate(selector, paused, now);
    },
    async throttleIfPaused(seqs, now) {
      return seqs.length === 0 ? 0 : throttle.immediate(seqs, now);
    },
  };
}
