import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Store } from '../../src/store/port/index.ts';

const T0 = Date.UTC(2026, 0, 1);

/** Behaviour of `store.templates` that every adapter must show. */
export function templateStoreSuite(name: string, open: () => Promise<Store>): void {
  describe(`${name}: templates store`, () => {
    let store: Store;
    before(async () => {
      store = await open();
    });
    after(() => store.close());

    it('creates version 1 and refuses a second create of the key', async () => {
      const created = await store.templates.create(
        't1',
        'welcome',
        'email',
        { subject: 'Hi', text: 'a' },
        T0,
      );
      assert.equal(created?.version, 1);
      assert.equal(created?.channel, 'email');
      assert.equal(await store.templates.create('t1', 'welcome', 'sms', { text: 'x' }, T0), null);
      assert.equal((await store.templates.create('t2', 'welcome', 'sms', { text: 'x' }, T0))?.version, 1);
    });

    it('keeps every version readable after updates', async () => {
      await store.templates.create('t1', 'reset', 'sms', { text: 'v1' }, T0);
      const v2 = await store.templates.update('t1', 'reset', 'sms', { text: 'v2' }, T0 + 1);
      assert.equal(v2?.version, 2);
      assert.deepEqual((await store.templates.get('t1', 'reset'))?.content, { text: 'v2' });
      assert.deepEqual((await store.templates.getVersion('t1', 'reset', 1))?.content, { text: 'v1' });
      assert.equal(await store.templates.update('t1', 'missing', 'sms', { text: 'x' }, T0), null);
    });

    it('keeps sample variables with each version', async () => {
      const v1 = await store.templates.create('t1', 'order', 'sms', { text: '{{ id }}' }, T0, { id: 'A1' });
      assert.deepEqual(v1?.sampleVariables, { id: 'A1' });
      await store.templates.update('t1', 'order', 'sms', { text: '#{{ id }}' }, T0 + 1, { id: 'B2' });
      assert.deepEqual((await store.templates.get('t1', 'order'))?.sampleVariables, { id: 'B2' });
      assert.deepEqual((await store.templates.getVersion('t1', 'order', 1))?.sampleVariables, { id: 'A1' });
      const none = await store.templates.create('t1', 'plain', 'sms', { text: 'hi' }, T0);
      assert.equal(none?.sampleVariables, null);
    });

    it('deletes the key but keeps its versions, and continues numbering when re-created', async () => {
      await store.templates.create('t1', 'gone', 'push', { title: 'a', body: 'b' }, T0);
      assert.equal(await store.templates.delete('t1', 'gone'), true);
      assert.equal(await store.templates.delete('t1', 'gone'), false);
      assert.equal(await store.templates.get('t1', 'gone'), null);
      assert.ok(await store.templates.getVersion('t1', 'gone', 1));
      const again = await store.templates.create('t1', 'gone', 'push', { title: 'c', body: 'd' }, T0 + 2);
      assert.equal(again?.version, 2);
    });

    it('lists a tenant’s current versions by key, after a key', async () => {
      for (const key of ['b', 'a', 'c']) await store.templates.create('list', key, 'sms', { text: key }, T0);
      const all = await store.templates.list('list', 10);
      assert.deepEqual(
        all.map((t) => t.key),
        ['a', 'b', 'c'],
      );
      const after = await store.templates.list('list', 10, 'a');
      assert.deepEqual(
        after.map((t) => t.key),
        ['b', 'c'],
      );
      assert.equal((await store.templates.list('list', 1)).length, 1);
    });

    it('hides another tenant’s templates', async () => {
      await store.templates.create('t3', 'private', 'sms', { text: 'x' }, T0);
      assert.equal(await store.templates.get('t4', 'private'), null);
      assert.equal(await store.templates.getVersion('t4', 'private', 1), null);
      assert.equal(await store.templates.delete('t4', 'private'), false);
    });
  });
}
