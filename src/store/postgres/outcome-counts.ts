import { bucketStart, HISTORY_SPANS, pruneBefore, pruneSchedule } from '../../notifications/outcomes.ts';
import type { OutcomeBucket, OutcomeCount, OutcomeCountStore } from '../port/outcome-counts.ts';
import type { Query, Sql } from './connect.ts';
import { awaitEach, type Send } from './pipelined.ts';

/** The queue driver's countOutcomes, given the cycle's transaction and how it sends its count. */
export type OutcomeCounter = (
  tx: Query,
  counts: readonly OutcomeCount[],
  now: number,
  send?: Send,
) => Promise<void>;

/**
 * countOutcomes on PostgreSQL, made once per queue store (its prune schedule): one statement for
 * every key and span. Each row is the writing backend's own (shard = pg_backend_pid()), so two
 * workers' cycles never wait on each other's counter rows however often they count the same
 * tenant and channel.
 */
export function createPostgresOutcomeCounter(): OutcomeCounter {
  const pruneDue = pruneSchedule();
  return async (tx, counts, now, send = awaitEach) => {
    const rows = HISTORY_SPANS.flatMap((span) =>
      counts.map((c) => ({ ...c, span, bucket: bucketStart(now, span) })),
    );
    await send(tx`INSERT INTO outcome_counts (tenant, span, bucket, channel, outcome, shard, n)
      SELECT tenant, span, bucket, channel, outcome, pg_backend_pid(), n
      FROM json_to_recordset(${JSON.stringify(rows)}::text::json)
        AS c(tenant text, span int, bucket bigint, channel text, outcome text, n int)
      ON CONFLICT (tenant, span, bucket, channel, outcome, shard) DO UPDATE SET n = outcome_counts.n + excluded.n`);
    if (!pruneDue(now)) return;
    for (const span of HISTORY_SPANS)
      await tx`DELETE FROM outcome_counts WHERE span = ${span} AND bucket < ${pruneBefore(span, now)}`;
  };
}

export function createPostgresOutcomeCounts(sql: Sql): OutcomeCountStore {
  return {
    async read({ spanMs, since, tenant }) {
      const ofTenant = tenant === undefined ? sql`` : sql`AND tenant = ${tenant}`;
      return sql<OutcomeBucket[]>`
        SELECT bucket, channel, outcome, sum(n)::bigint AS n FROM outcome_counts
        WHERE span = ${spanMs} AND bucket >= ${since} ${ofTenant}
        GROUP BY bucket, channel, outcome ORDER BY bucket, channel, outcome`;
    },
  };
}
