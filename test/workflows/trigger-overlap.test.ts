// #52 (decision 0049): on PostgreSQL the group commits of workflow triggers overlap, as ingest's
// (decision 0046): one held up does not hold the triggers after it. A transaction of another
// connection holds an Idempotency-Key uncommitted, so the trigger reusing that key waits in its
// commit for that transaction's outcome; a trigger without a key, sent meanwhile, must get its
// 201 while the first still waits. With one commit of triggers at a time it waits for the first.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectPostgres, type Sql } from '../../src/store/postgres/connect.ts';
import { secondWhileKeyHeld } from '../helpers/held-key.ts';
import { startTriggerHerald, type TriggerHerald } from '../helpers/trigger-herald.ts';

const HELD_KEY = 'held-by-another-transaction';

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
    const { second, keyed } = await secondWhileKeyHeld(
      sql,
      'workflow_triggers',
      first.body.triggerId,
      HELD_KEY,
      () => t.trigger({ recipients: ['u1'] }, HELD_KEY),
      () => t.trigger({ recipients: ['u2'] }),
    );
    assert.notEqual(second, 'held', 'the second trigger waited for the first one’s commit');
    assert.equal(second === 'held' ? 0 : second.status, 201);
    assert.equal(keyed.status, 201, 'the key was never committed by the other transaction: a new trigger');
    assert.equal(await t.count('SELECT count(*) AS n FROM workflow_triggers'), 3);
    assert.equal(await t.count('SELECT count(*) AS n FROM workflow_runs'), 3);
  });
});
