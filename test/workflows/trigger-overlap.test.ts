// #52 (decision 0049): on PostgreSQL the group commits of workflow triggers overlap, as ingest's
// (decision 0046): one held up does not hold the triggers after it. A transaction of another
// connection holds an Idempotency-Key uncommitted, so the trigger reusing that key waits in its
// commit for that transaction's outcome; a trigger without a key, sent meanwhile, must get its
// 201 while the first still waits. With one commit of triggers at a time it waits for the first.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectPostgres, type Sql } from '../../src/store/postgres/connect.ts';
import { eventually } from '../helpers/eventually.ts';
import { startTriggerHerald, type TriggerHerald } from '../helpers/trigger-herald.ts';

const HELD_KEY = 'held-by-another-transaction';
/** Long beside a commit, short beside the test file's limit: the second answer comes well within it. */
const PATIENCE_MS = 20_000;

describe('workflow triggers on PostgreSQL: a commit held up does not hold the next', () => {
  let t: TriggerHerald;
  let sql: Sql | undefined;
  before(async () => {
    t = await startTriggerHerald('postgres', 'herald_trigger_overlap');
  });
  after(async () => {
    await sql?.end({ timeout: 1 });
    await t.close();
  });

  it('answers a second trigger while the first waits for another transaction', async () => {
    const first = await t.trigger({ recipients: ['u0'] });
    assert.equal(first.status, 201, JSON.stringify(first.body));

    // Another connection copies that trigger under the key, and keeps its transaction open.
    sql = connectPostgres(t.herald.deps.config.databaseUrl as string, { max: 2 });
    const holder = await sql.reserve();
    const columns = (
      await holder<{ name: string }[]>`SELECT column_name AS name FROM information_schema.columns
        WHERE table_name = 'workflow_triggers' AND column_name NOT IN ('seq', 'id', 'idempotency_key')`
    ).map((c) => `"${c.name}"`);
    await holder`BEGIN`;
    await holder.unsafe(
      `INSERT INTO workflow_triggers (id, idempotency_key, ${columns.join(', ')})
       SELECT $1, $2, ${columns.join(', ')} FROM workflow_triggers WHERE id = $3`,
      ['held-copy', HELD_KEY, first.body.triggerId],
    );
    let keyed: ReturnType<TriggerHerald['trigger']> | undefined;
    try {
      keyed = t.trigger({ recipients: ['u1'] }, HELD_KEY);
      // Its commit waits on the uncommitted key (a lock wait in PostgreSQL).
      const waiting = sql;
      await eventually(
        async () => {
          const [{ n }] = await waiting<[{ n: number }]>`SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event = 'transactionid'`;
          return n === 1;
        },
        PATIENCE_MS,
        'the keyed trigger to wait for the other transaction',
      );
      const second = await Promise.race([
        t.trigger({ recipients: ['u2'] }),
        new Promise<'held'>((resolve) => setTimeout(() => resolve('held'), PATIENCE_MS).unref()),
      ]);
      assert.notEqual(second, 'held', 'the second trigger waited for the first one’s commit');
      assert.equal(second === 'held' ? 0 : second.status, 201);
      await holder`ROLLBACK`;
      const answer = await keyed;
      assert.equal(answer.status, 201, 'the key was never committed by the other transaction: a new trigger');
    } finally {
      await holder`ROLLBACK`; // a no-op once rolled back above
      await keyed?.catch(() => undefined);
      holder.release();
    }
    assert.equal(await t.count('SELECT count(*) AS n FROM workflow_triggers'), 3);
    assert.equal(await t.count('SELECT count(*) AS n FROM workflow_runs'), 3);
  });
});
