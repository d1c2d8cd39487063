/**
 * `node --import tsx bench/pg-workflow-turns.ts [runs]`: the workflow engine's turns on PostgreSQL
 * at the store's level, timed one by one. Seeds `runs` (200,000 unless told) of a one-delay
 * workflow for one tenant on a durable embedded PostgreSQL with pg_stat_statements, takes them
 * into their delay, then past it in the engine's turns of 1,000 (FIXED.fanOutChunk.sharedStore),
 * and prints the rate, the first, middle and last turns' times, and the statements that took the
 * most time; `PG_PROFILE_PLANS=<file>` adds auto_explain's plans of statements over 50 ms.
 * Decision record 0068 quotes it.
 */
import postgres from 'postgres';
import { FIXED } from '../src/config/schema.ts';
import { definitionKey } from '../src/store/port/workflow-runs.ts';
import { createPostgresStore } from '../src/store/postgres/index.ts';
import { newTrigger, workflowRecord } from '../test/helpers/workflow-fixtures.ts';
import { startProfiledPostgres } from './lib/pg-stats.ts';
import { runScript } from './lib/proc.ts';

const n = Number(process.argv[2] ?? 200_000);
const chunk = FIXED.fanOutChunk.sharedStore;
const T0 = Date.UTC(2026, 0, 1);
const plans = process.env.PG_PROFILE_PLANS;
async function main() {
  // PG_PROFILE_PLANS=<file>: the plans of statements over 50 ms, written there.
  const server = await startProfiledPostgres({ plansTo: plans, planMs: 50 });
  try {
    const url = await server.createDatabase('wf_turns');
    const sql = postgres(url, { max: 1, onnotice: () => undefined });
    await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
    const store = await createPostgresStore(url);
    const delayed = workflowRecord('delayed', [{ type: 'delay', for: 'PT1M' }], 1, T0);
    const definitions = new Map([[definitionKey('default', 'delayed', 1), delayed]]);
    for (let i = 0; i < n; i += 1000) {
      const runs = Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({
        id: `d-${i + k}`,
        recipientId: `r${(i + k) % 1000}`,
      }));
      await store.workflowRuns.trigger(
        newTrigger(delayed, 'default', { id: `t-${i}`, createdAt: T0 }),
        runs,
        0,
      );
    }
    let t = performance.now();
    for (;;) {
      const s = await store.workflowRuns.advance(T0, chunk, definitions);
      if (s.advanced === 0) break;
    }
    console.log(`into delay: ${((performance.now() - t) / 1000).toFixed(1)} s`);
    await sql`SELECT pg_stat_statements_reset()`;
    t = performance.now();
    const turns: number[] = [];
    for (;;) {
      const t1 = performance.now();
      const s = await store.workflowRuns.advance(T0 + 60_000, chunk, definitions);
      turns.push(performance.now() - t1);
      if (s.advanced === 0) break;
    }
    const secs = (performance.now() - t) / 1000;
    console.log(
      `resumed ${n} in ${secs.toFixed(1)} s = ${Math.round(n / secs)}/s; turn ms first ${turns.slice(0, 3).map((x) => x.toFixed(0))} mid ${turns[Math.floor(turns.length / 2)]?.toFixed(0)} last ${turns.slice(-4).map((x) => x.toFixed(0))}`,
    );
    const top =
      await sql`SELECT calls, round(total_exec_time)::int AS ms, round(mean_exec_time::numeric, 2) AS mean, left(regexp_replace(query, '\\s+', ' ', 'g'), 150) AS q FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 8`;
    for (const r of top) console.log(`${r.calls} calls, ${r.ms} ms, mean ${r.mean}: ${r.q}`);
    await store.close();
    await sql.end();
  } finally {
    await server.stop();
  }
}
runScript(main);
