import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Store } from '../../src/store/port/index.ts';
import type { WorkflowStep } from '../../src/workflows/model.ts';

const T0 = Date.UTC(2026, 0, 1);
const SEND: WorkflowStep = { type: 'send', channel: 'inapp', template: 'comment' };
const FOLLOW_UP: WorkflowStep[] = [
  SEND,
  { type: 'delay', for: 'PT10M' },
  { type: 'send', channel: 'email', content: { subject: 'Unread', text: 'See it' }, if: 'not_read' },
];
const def = (steps: WorkflowStep[], name: string | null = null, category: string | null = null) => ({
  name,
  category,
  steps,
});

/** Behaviour of `store.workflows` that every adapter must show. */
export function workflowStoreSuite(name: string, open: () => Promise<Store>): void {
  describe(`${name}: workflows store`, () => {
    let store: Store;
    before(async () => {
      store = await open();
    });
    after(() => store.close());

    it('saves version 1, then a new version each save, every version readable by number', async () => {
      const first = await store.workflows.put('t1', 'follow-up', def([SEND], 'Follow up', 'comments'), T0);
      assert.equal(first.created, true);
      assert.deepEqual(first.workflow, {
        key: 'follow-up',
        version: 1,
        name: 'Follow up',
        category: 'comments',
        steps: [SEND],
        createdAt: T0,
        updatedAt: T0,
      });
      const second = await store.workflows.put('t1', 'follow-up', def(FOLLOW_UP), T0 + 5);
      assert.equal(second.created, false);
      assert.equal(second.workflow.version, 2);
      assert.equal(second.workflow.createdAt, T0, 'the key keeps its creation time');
      assert.equal(second.workflow.updatedAt, T0 + 5);
      assert.deepEqual(second.workflow.steps, FOLLOW_UP, 'steps come back as saved, field for field');
      assert.equal((await store.workflows.get('t1', 'follow-up'))?.version, 2);
      const v1 = await store.workflows.get('t1', 'follow-up', 1);
      assert.deepEqual(
        [v1?.version, v1?.name, v1?.category, v1?.steps],
        [1, 'Follow up', 'comments', [SEND]],
      );
      assert.equal(await store.workflows.get('t1', 'follow-up', 3), null);
      assert.equal(await store.workflows.get('t2', 'follow-up'), null, 'another tenant has none');
      assert.equal(await store.workflows.get('t1', 'missing'), null);
    });

    it('deletes the key but keeps its versions, and a later save continues their numbers', async () => {
      await store.workflows.put('t1', 'gone', def([SEND]), T0);
      await store.workflows.put('t1', 'gone', def(FOLLOW_UP), T0 + 1);
      assert.equal(await store.workflows.delete('t1', 'gone'), true);
      assert.equal(await store.workflows.delete('t1', 'gone'), false);
      assert.equal(await store.workflows.delete('t1', 'never'), false);
      assert.equal(await store.workflows.get('t1', 'gone'), null);
      assert.deepEqual(
        (await store.workflows.get('t1', 'gone', 2))?.steps,
        FOLLOW_UP,
        'a run keeps its version',
      );
      const again = await store.workflows.put('t1', 'gone', def([SEND]), T0 + 9);
      assert.deepEqual([again.created, again.workflow.version, again.workflow.createdAt], [true, 3, T0 + 9]);
      assert.deepEqual((await store.workflows.get('t1', 'gone', 1))?.steps, [SEND]);
    });

    it('lists current versions by key, a page after a cursor, within the tenant', async () => {
      for (const key of ['l-c', 'l-a', 'l-b']) await store.workflows.put('t3', key, def([SEND]), T0);
      await store.workflows.put('t3', 'l-b', def(FOLLOW_UP), T0 + 1);
      await store.workflows.put('t4', 'l-a', def([SEND]), T0);
      const page = await store.workflows.list('t3', { limit: 2 });
      assert.deepEqual(
        page.map((w) => [w.key, w.version]),
        [
          ['l-a', 1],
          ['l-b', 2],
        ],
      );
      const rest = await store.workflows.list('t3', { limit: 2, cursor: 'l-b' });
      assert.deepEqual(
        rest.map((w) => w.key),
        ['l-c'],
      );
      await store.workflows.delete('t3', 'l-a');
      assert.deepEqual(
        (await store.workflows.list('t3', { limit: 10 })).map((w) => w.key),
        ['l-b', 'l-c'],
      );
    });

    it('gives concurrent saves of one key distinct versions', async () => {
      const saves = await Promise.all(
        Array.from({ length: 6 }, (_, i) => store.workflows.put('t5', 'race', def([SEND], `n${i}`), T0 + i)),
      );
      assert.deepEqual(saves.map((s) => s.workflow.version).sort(), [1, 2, 3, 4, 5, 6]);
      assert.equal(saves.filter((s) => s.created).length, 1);
      assert.equal((await store.workflows.get('t5', 'race'))?.version, 6);
    });
  });
}
