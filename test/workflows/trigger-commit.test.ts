// #52 (decision 0042): workflow triggers are group-committed, on SQLite and PostgreSQL. A real
// Herald (API in one process) over HTTP: concurrent triggers share transactions and each answers
// 201 only once its trigger and runs are readable through another connection; in one group, a
// trigger refused by its Idempotency-Key (409) stores nothing while its neighbours start, two
// triggers with one new key store one; and a trigger the database refuses fails alone.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Herald } from '../../src/main.ts';
import type { TriggerItem } from '../../src/store/port/workflow-runs.ts';
import { createTriggerCommit } from '../../src/workflows/trigger-commit.ts';
import { holdFlushes } from '../helpers/held-commit.ts';
import { type Answer, PEOPLE, startTriggerHerald, type TriggerHerald } from '../helpers/trigger-herald.ts';
import { newTrigger } from '../helpers/workflow-fixtures.ts';

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`workflow triggers' group commit (${kind})`, () => {
    let t: TriggerHerald;
    let herald: Herald;

    before(async () => {
      t = await startTriggerHerald(kind, 'herald_trigger_commit');
      herald = t.herald;
    });
    after(() => t.close());

    const trigger = (body: object, key?: string) => t.trigger(body, key);
    const read = (sql: string, ...params: string[]) => t.read(sql, ...params);
    const count = (sql: string, ...params: string[]) => t.count(sql, ...params);
    const runsOf = (triggerId: string) =>
      count('SELECT count(*) AS n FROM workflow_runs WHERE trigger_id = ?', triggerId);

    /** Holds each commit until triggers weighing `total` (runs plus one each) have reached the batcher. */
    const holdUntil = (total: number) =>
      holdFlushes(
        herald.store.workflowRuns,
        'triggerMany',
        total,
        () => herald.deps.triggers.stats().pending,
        (item) => item.runs.length + 1,
      );

    it('commits concurrent triggers in fewer transactions, each readable from another connection at its 201', async () => {
      const n = 40;
      // Two runs a trigger: each weighs 3.
      const release = holdUntil(3 * n);
      try {
        const before = herald.deps.triggers.stats();
        const seen = await Promise.all(
          Array.from({ length: n }, async (_, i) => {
            const answer = await trigger({ recipients: [PEOPLE[i % 10], PEOPLE[(i + 1) % 10]] });
            assert.equal(answer.status, 201, JSON.stringify(answer.body));
            // At its 201 the trigger and both runs are committed: another connection sees them.
            const stored = await count(
              'SELECT count(*) AS n FROM workflow_triggers WHERE id = ?',
              answer.body.triggerId,
            );
            return stored === 1 && (await runsOf(answer.body.triggerId)) === 2;
          }),
        );
        assert.equal(seen.filter(Boolean).length, n);
        const stats = herald.deps.triggers.stats();
        assert.equal(stats.items - before.items, n);
        const transactions = stats.flushes - before.flushes;
        assert.ok(transactions < n, `${transactions} transactions for ${n} triggers`);
      } finally {
        release();
      }
    });

    it('in one group, a trigger refused by its Idempotency-Key stores nothing and its neighbours start', async () => {
      const first = await trigger({ recipients: ['u1'], variables: { n: 1 } }, 'k-old');
      assert.equal(first.status, 201);
      const triggersBefore = await count('SELECT count(*) AS n FROM workflow_triggers');
      const good = 10;
      // One run a trigger: each weighs 2. The two with the live key `k-old` are answered before
      // the batcher (its first answer is read first), so 4 of the 6 with keys reach it.
      const release = holdUntil(2 * (good + 4));
      let answers: Answer[];
      try {
        answers = await Promise.all([
          ...Array.from({ length: good }, (_, i) => trigger({ recipients: [PEOPLE[i]] })),
          // Another body with a live key: 409, nothing stored.
          trigger({ recipients: ['u2'], variables: { n: 2 } }, 'k-old'),
          // The same body with a live key: the first answer again.
          trigger({ recipients: ['u1'], variables: { n: 1 } }, 'k-old'),
          // One new key twice in the group, bodies that differ: one starts, the other is 409.
          trigger({ recipients: ['u3'], variables: { n: 3 } }, 'k-new'),
          trigger({ recipients: ['u4'], variables: { n: 4 } }, 'k-new'),
          // Another new key twice with one body: one starts, the other replays its answer.
          trigger({ recipients: ['u5'] }, 'k-same'),
          trigger({ recipients: ['u5'] }, 'k-same'),
        ]);
      } finally {
        release();
      }
      const [conflict, replay, newA, newB, same, sameAgain] = answers.slice(good) as Answer[];
      for (const answer of answers.slice(0, good)) assert.equal(answer.status, 201);
      assert.equal(conflict?.status, 409);
      assert.equal(conflict?.body.code, 'IDEMPOTENCY_CONFLICT');
      assert.equal(replay?.status, 200);
      assert.deepEqual(replay?.body, first.body);
      assert.deepEqual([newA?.status, newB?.status].sort(), [201, 409]);
      assert.deepEqual([same?.status, sameAgain?.status].sort(), [200, 201]);
      assert.deepEqual(sameAgain?.body, same?.body);
      // The good ones, one of k-new and k-same: nothing of the refused ones or replays.
      assert.equal(await count('SELECT count(*) AS n FROM workflow_triggers'), triggersBefore + good + 2);
      for (const answer of answers.filter((a) => a.status === 201)) {
        assert.equal(await runsOf(answer.body.triggerId), 1);
      }
      const started = (newA?.status === 201 ? newA : newB) as Answer;
      const kept = await read(
        'SELECT variables FROM workflow_runs WHERE trigger_id = ?',
        started.body.triggerId,
      );
      assert.equal(kept[0]?.variables, JSON.stringify({ n: newA?.status === 201 ? 3 : 4 }));
    });

    it('a trigger its transaction refuses fails alone, storing nothing; its neighbours commit', async () => {
      const workflow = await herald.store.workflows.get('default', 'w');
      assert.ok(workflow);
      const [taken] = await read('SELECT id FROM workflow_runs LIMIT 1');
      const now = Date.now();
      const item = (id: string, runId: string): TriggerItem => ({
        trigger: newTrigger(workflow, 'default', { id, createdAt: now }),
        runs: [{ id: runId, recipientId: 'u1' }],
      });
      const triggers = createTriggerCommit({ ...herald.deps, runsWakeup: { notify() {} } });
      const outcomes = await Promise.allSettled([
        triggers.submit(item('t-good-1', 'run-good-1')),
        // A run ID that exists already: the database refuses the row.
        triggers.submit(item('t-bad', String(taken?.id))),
        triggers.submit(item('t-good-2', 'run-good-2')),
      ]);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      // The three were flushed together, then the failed group one by one.
      assert.deepEqual(triggers.stats(), { flushes: 2, items: 2, pending: 0 });
      assert.equal(await count("SELECT count(*) AS n FROM workflow_triggers WHERE id = 't-bad'"), 0);
      assert.equal(await runsOf('t-good-1'), 1);
      assert.equal(await runsOf('t-good-2'), 1);
    });
  });
}
