// The tail of a tenant's line (joinRank, src/store/lanes.ts) on PostgreSQL with statistics taken
// while no row was ready, as after a first backlog of scheduled rows, before autovacuum has
// analysed the table again. The planner then believes the ready index nearly empty and read the
// tail from it backwards, filtering by tenant: for a tenant with no ready row, every ready row of
// its cell, at each acceptance and promotion of such a tenant's row (300,000 rows due across
// 1,000 tenants: promotion steps of 120 ms growing to 1.8 s, against about 30 ms once analysed).
// The ready index's condition now keeps the tail off it (migration 190).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { createPostgresStore } from '../../src/store/postgres/index.ts';
import { joinRank } from '../../src/store/postgres/lanes.ts';
import type { PlanNode } from './postgres-plans.ts';

const scans = (node: PlanNode): PlanNode[] => [
  ...(node['Index Name'] ? [node] : []),
  ...(node.Plans ?? []).flatMap(scans),
];

export function laneTailSuite(open: () => ReturnType<typeof createPostgresStore>): void {
  describe('PostgreSQL: a tenant line tail with statistics taken before any row was ready', () => {
    it('is read from the line index, by tenant, not from the ready index', async () => {
      const store = await open();
      const { sql } = store;
      const now = Date.now();
      await sql`INSERT INTO notifications (id, tenant, channel, priority, status, queue_state, due_at,
          recipient, content, variables, metadata, attempts, created_at, updated_at)
        SELECT 'n-' || i, 't' || (i % 100), 'email', 3, 'QUEUED', 'waiting', ${now - 1000},
          '{"email":"ada@example.com"}', '{"subject":"Hi","text":"x"}', '{}', '{}', 0, ${now}, ${now}
        FROM generate_series(1, 20000) i`;
      await sql`ANALYZE notifications`;
      // Some rows become ready; the statistics still say none is.
      for (let step = 0; step < 3; step++)
        await store.queue.cycle({
          owner: 'w',
          now,
          leaseUntil: now + 60_000,
          completions: [],
          maxAttempts: 8,
        });
      const [{ ready }] = await sql<[{ ready: number }]>`
        SELECT count(*)::int AS ready FROM notifications WHERE queue_state = 'ready'`;
      assert.ok(ready >= 1000, `${ready} ready`);

      const [row] = await sql<[{ 'QUERY PLAN': [{ Plan: PlanNode }] }]>`
        EXPLAIN (FORMAT JSON) SELECT ${sql.unsafe(joinRank(`'a-new-tenant'`, '3', `'email'`))}`;
      const tail = scans(row['QUERY PLAN'][0].Plan).find((scan) =>
        /tenant/.test(`${scan['Index Cond'] ?? ''} ${scan.Filter ?? ''}`),
      );
      assert.ok(tail, 'the plan reads the tail');
      assert.equal(tail['Index Name'], 'notifications_lane_tail');
      assert.match(tail['Index Cond'] ?? '', /tenant = 'a-new-tenant'/);
    });
  });
}
