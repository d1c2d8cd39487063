// #52 (decision 0057): on SQLite the triggers' group commit hands its groups to the dispatch
// thread, four on their way at once of at most 1,000 rows each (4,000 together, as ingest's two of
// 2,000), and the thread commits those that queued together in one transaction
// (dispatch/joined-inserts.ts). A real Herald's deps and SQLite store; the thread's side is played
// by a writer that holds the hand-overs, then commits them joined, as the thread does.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type InsertCall, insertJoined } from '../../src/dispatch/joined-inserts.ts';
import type { Herald } from '../../src/main.ts';
import type { TriggerHit, TriggerItem } from '../../src/store/port/workflow-runs.ts';
import { createTriggerCommit } from '../../src/workflows/trigger-commit.ts';
import { startTriggerHerald, type TriggerHerald } from '../helpers/trigger-herald.ts';
import { newTrigger } from '../helpers/workflow-fixtures.ts';

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("workflow triggers' hand-overs to the dispatch thread (sqlite)", () => {
  let t: TriggerHerald;
  let herald: Herald;

  before(async () => {
    t = await startTriggerHerald('sqlite', 'herald_trigger_hand_overs');
    herald = t.herald;
  });
  after(() => t.close());

  it('hands over four groups while the thread is busy, 4,000 rows at most, and commits those queued in one transaction', async () => {
    const workflow = await herald.store.workflows.get('default', 'w');
    assert.ok(workflow);
    const now = Date.now();
    // 20 triggers of 300 runs: each weighs 301.
    const items: TriggerItem[] = Array.from({ length: 20 }, (_, i) => ({
      trigger: newTrigger(workflow, 'default', { id: `hand-over-${i}`, createdAt: now }),
      runs: Array.from({ length: 300 }, (_, r) => ({ id: `hand-over-${i}-${r}`, recipientId: `u${r % 10}` })),
    }));
    let transactions = 0;
    const triggerMany = (rows: TriggerItem[], since: number) => {
      transactions += 1;
      return herald.store.workflowRuns.triggerMany(rows, since);
    };
    // The thread, busy: hand-overs wait until released, then those waiting commit joined.
    let held: Array<
      InsertCall<TriggerItem> & { answer(results: Promise<Array<TriggerHit | undefined>>): void }
    > = [];
    let busy = true;
    const release = () => {
      const calls = held;
      held = [];
      busy = false;
      insertJoined(calls, triggerMany).forEach((results, i) => {
        calls[i]?.answer(results);
      });
    };
    const triggers = createTriggerCommit({
      ...herald.deps,
      runsWakeup: { notify() {} },
      writer: (rows, since) =>
        busy
          ? new Promise((resolve) => held.push({ rows, since, answer: resolve }))
          : triggerMany(rows, since),
    });
    const answers = Promise.all(items.map((item) => triggers.submit(item)));
    for (let i = 0; i < 10; i += 1) await turn();
    assert.equal(held.length, 4, 'groups on their way while the thread is busy');
    const weights = held.map((call) => call.rows.reduce((sum, item) => sum + item.runs.length + 1, 0));
    assert.ok(
      weights.every((w) => w <= 1000),
      `each hand-over 1,000 rows at most: ${weights.join(', ')}`,
    );
    release();
    assert.deepEqual(await answers, Array(20).fill(undefined));
    // The four held hand-overs (12 triggers) in one transaction, then the other 8 triggers in their own groups.
    assert.equal(transactions, 1 + 3);
    assert.equal(
      await t.count("SELECT count(*) AS n FROM workflow_triggers WHERE id LIKE 'hand-over-%'"),
      20,
    );
    assert.equal(
      await t.count("SELECT count(*) AS n FROM workflow_runs WHERE trigger_id LIKE 'hand-over-%'"),
      6000,
    );
  });
});
