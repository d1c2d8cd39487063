// Decision 0064 (docs/workflow-runs.md "The recipients' index"): on SQLite a trigger's commit does
// not enter its runs into the recipients' index; the engine enters them in bulk, a chunk once that
// many wait, the rest once none came for a while, and a recipient's list holds each run from its
// trigger's commit on, before and after. The real store and the engine's turn on a manual clock.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { manualClock } from '../../src/clock.ts';
import { FIXED } from '../../src/config/schema.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { firstSteps } from '../../src/workflows/advance.ts';
import { engineTurn } from '../../src/workflows/engine.ts';
import { tempDir } from '../helpers/config.ts';
import { newTrigger, workflowRecord } from '../helpers/workflow-fixtures.ts';

describe("SQLite's recipients' index of workflow runs", () => {
  const store = createSqliteStore(tempDir());
  after(() => store.close());
  const clock = manualClock();
  const turn = engineTurn({
    runs: store.workflowRuns,
    workflows: store.workflows,
    clock,
    wakeup: { notify() {} },
    chunk: 500,
  });
  const w = workflowRecord('w', [{ type: 'delay', for: 'PT1H' }], 1, clock.now());
  const { chunk, quietMs } = FIXED.recipientsIndex;
  let made = 0;

  /** A trigger of `n` runs, recipients u0..u9 in turn, stored as the trigger route stores them. */
  const trigger = async (n: number) => {
    const runs = Array.from({ length: n }, () => ({ id: `run-${++made}`, recipientId: `u${made % 10}` }));
    const t = newTrigger(w, 'default', { id: `trigger-${made}`, createdAt: clock.now() });
    await store.workflowRuns.triggerMany([{ trigger: t, runs, start: firstSteps(w, null, clock.now()) }], 0);
  };
  const entries = () =>
    store.db.prepare('SELECT count(*) FROM workflow_run_recipients').pluck().get() as number;
  /** u3's runs as the list reads them, and as they were made (newest first). */
  const u3 = async () => {
    const read = (await store.workflowRuns.list('default', { recipientId: 'u3' }, { limit: 10_000 })).map(
      (r) => r.id,
    );
    const all = (await store.workflowRuns.list('default', {}, { limit: 100_000 }))
      .filter((r) => r.recipientId === 'u3')
      .map((r) => r.id);
    return { read, all };
  };

  it('leaves a few recent runs out of the index, listed all the same, and enters them once none came for a while', async () => {
    await trigger(25);
    assert.equal(entries(), 0, "the trigger's commit entered none");
    assert.equal(await turn(), false);
    assert.equal(entries(), 0, 'fewer than a chunk, and recent: left for later');
    const before = await u3();
    assert.equal(before.read.length, 3);
    assert.deepEqual(before.read, before.all);
    clock.advance(quietMs);
    await turn();
    assert.equal(entries(), 25);
    assert.deepEqual(await u3(), before);
  });

  it('enters a chunk as soon as a chunk waits, oldest first, and leaves the rest until none came for a while', async () => {
    await trigger(chunk + 7);
    assert.equal(entries(), 25);
    assert.equal(await turn(), true, 'a whole chunk entered: more may wait');
    assert.equal(entries(), 25 + chunk);
    assert.equal(await turn(), false);
    assert.equal(entries(), 25 + chunk);
    const { read, all } = await u3();
    assert.deepEqual(read, all);
    assert.equal(read.length, 3 + Math.ceil(chunk / 10));
    clock.advance(quietMs);
    await turn();
    assert.equal(entries(), made);
    assert.deepEqual(await u3(), { read, all });
  });
});
