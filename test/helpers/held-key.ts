// An Idempotency-Key held by another PostgreSQL transaction, for the tests of overlapping group
// commits (ingest's and workflow triggers'): a request reusing the key waits in its commit for
// that transaction, and a request sent meanwhile must not wait with it.
import type { Sql } from '../../src/store/postgres/connect.ts';
import { eventually } from './eventually.ts';

/** Long beside a commit, short beside a test file's limit: the second answer comes well within it. */
export const PATIENCE_MS = 20_000;

/**
 * Copies row `modelId` of `table` under `key` in a transaction of another connection of `sql`,
 * left open; starts `keyed` (a request with `key`), waits up to PATIENCE_MS until its commit
 * waits for that transaction (a `transactionid` lock wait), then starts `second` and takes its
 * answer, or 'held' if it waited PATIENCE_MS too. Then rolls the copy back and takes `keyed`'s
 * answer (the key was never committed: a new row).
 */
export async function secondWhileKeyHeld<K, S>(
  sql: Sql,
  table: 'notifications' | 'workflow_triggers',
  modelId: string,
  key: string,
  keyed: () => Promise<K>,
  second: () => Promise<S>,
): Promise<{ second: S | 'held'; keyed: K }> {
  const holder = await sql.reserve();
  const columns = (
    await holder<{ name: string }[]>`SELECT column_name AS name FROM information_schema.columns
      WHERE table_name = ${table} AND column_name NOT IN ('seq', 'id', 'idempotency_key')`
  ).map((c) => `"${c.name}"`);
  await holder`BEGIN`;
  await holder.unsafe(
    `INSERT INTO ${table} (id, idempotency_key, ${columns.join(', ')})
     SELECT $1, $2, ${columns.join(', ')} FROM ${table} WHERE id = $3`,
    ['held-copy', key, modelId],
  );
  let waiting: Promise<K> | undefined;
  try {
    waiting = keyed();
    await eventually(
      async () => {
        const [{ n }] = await sql<[{ n: number }]>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event = 'transactionid'`;
        return n === 1;
      },
      PATIENCE_MS,
      'the keyed request to wait for the other transaction',
    );
    const answer = await Promise.race([
      second(),
      new Promise<'held'>((resolve) => setTimeout(() => resolve('held'), PATIENCE_MS).unref()),
    ]);
    await holder`ROLLBACK`;
    return { second: answer, keyed: await waiting };
  } finally {
    await holder`ROLLBACK`; // a no-op once rolled back above
    await waiting?.catch(() => undefined);
    holder.release();
  }
}
