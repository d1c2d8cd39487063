import { bucketStart, HISTORY_SPANS, pruneBefore, pruneSchedule } from '../../notifications/outcomes.ts';
import type { OutcomeBucket, OutcomeCountStore } from '../port/outcome-counts.ts';
import type { QueueDriver } from '../queue-core.ts';
import type { SqliteDb } from './open.ts';

/** The queue driver's countOutcomes on SQLite: one upsert per key and span, shard 0 (one writer). */
export function createSqliteOutcomeCounter(db: SqliteDb): QueueDriver['countOutcomes'] {
  const add = db.prepare(
    `INSERT INTO outcome_counts (tenant, span, bucket, channel, outcome, shard, n) VALUES (?, ?, ?, ?, ?, 0, ?)
     ON CONFLICT (tenant, span, bucket, channel, outcome, shard) DO UPDATE SET n = n + excluded.n`,
  );
  const prune = db.prepare('DELETE FROM outcome_counts WHERE span = ? AND bucket < ?');
  const pruneDue = pruneSchedule();
  return (counts, now) => {
    for (const span of HISTORY_SPANS) {
      const bucket = bucketStart(now, span);
      for (const c of counts) add.run(c.tenant, span, bucket, c.channel, c.outcome, c.n);
    }
    if (pruneDue(now)) for (const span of HISTORY_SPANS) prune.run(span, pruneBefore(span, now));
  };
}

export function createSqliteOutcomeCounts(db: SqliteDb): OutcomeCountStore {
  const select = (ofTenant: string) =>
    db.prepare(
      `SELECT bucket, channel, outcome, SUM(n) AS n FROM outcome_counts
       WHERE span = @spanMs AND bucket >= @since${ofTenant} GROUP BY bucket, channel, outcome ORDER BY bucket, channel, outcome`,
    );
  const all = select('');
  const one = select(' AND tenant = @tenant');
  return {
    async read({ spanMs, since, tenant }) {
      return (
        tenant === undefined ? all.all({ spanMs, since }) : one.all({ spanMs, since, tenant })
      ) as OutcomeBucket[];
    },
  };
}
