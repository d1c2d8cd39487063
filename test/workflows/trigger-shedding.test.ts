// #52 (decision 0049): a trigger that cannot be taken into a group commit, because the triggers
// waiting for theirs weigh HERALD_INGEST_MAX_PENDING already, is answered 503 problem+json with
// Retry-After and stores nothing, on SQLite and PostgreSQL; those accepted before it commit once
// their transactions go on. Every commit is held open, so triggers pile up behind them whatever the
// number of transactions the store lets overlap.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { type Answer, PEOPLE, startTriggerHerald, type TriggerHerald } from '../helpers/trigger-herald.ts';

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`workflow triggers shed when their group commit is full (${kind})`, () => {
    let t: TriggerHerald;
    before(async () => {
      // A trigger of one recipient weighs 2 (its run and itself): one waits, the next is refused.
      t = await startTriggerHerald(kind, 'herald_trigger_shedding', { HERALD_INGEST_MAX_PENDING: '2' });
    });
    after(() => t.close());

    it('answers 503 with Retry-After and stores nothing of the refused trigger', async () => {
      const store = t.herald.store.workflowRuns;
      const original = store.triggerMany;
      let held = 0;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      store.triggerMany = async (items, since) => {
        held += items.length;
        await gate;
        return original.call(store, items, since);
      };
      const waiting: Array<Promise<Answer>> = [];
      let refused: { answer: Answer; recipient: string } | undefined;
      try {
        for (const recipient of PEOPLE) {
          const answer = t.trigger({ recipients: [recipient] });
          const sent = waiting.length + 1;
          // Either it is answered at once (refused), or it waits: in a held commit or queued for the next.
          let settled: Answer | undefined;
          answer.then((a) => {
            settled = a;
          });
          await eventually(
            () => settled !== undefined || held + t.herald.deps.triggers.stats().pending / 2 >= sent,
            20_000,
            `trigger for ${recipient} to wait or be answered`,
          );
          if (settled !== undefined) {
            refused = { answer: settled, recipient };
            break;
          }
          waiting.push(answer);
        }
      } finally {
        release();
        store.triggerMany = original;
      }
      assert.ok(refused, `no trigger refused among ${PEOPLE.length}`);
      assert.equal(refused.answer.status, 503, JSON.stringify(refused.answer.body));
      assert.match(refused.answer.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.equal(refused.answer.body.code, 'UNAVAILABLE');
      assert.equal(refused.answer.headers.get('retry-after'), '1');
      const accepted = await Promise.all(waiting);
      assert.ok(accepted.length > 0);
      for (const answer of accepted) assert.equal(answer.status, 201, JSON.stringify(answer.body));
      // Every accepted trigger and its run, nothing of the refused one.
      assert.equal(await t.count('SELECT count(*) AS n FROM workflow_triggers'), accepted.length);
      assert.equal(await t.count('SELECT count(*) AS n FROM workflow_runs'), accepted.length);
      assert.equal(
        await t.count('SELECT count(*) AS n FROM workflow_runs WHERE recipient_id = ?', refused.recipient),
        0,
      );
    });
  });
}
