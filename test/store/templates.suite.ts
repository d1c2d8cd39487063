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

    it('keeps a default category with each version, carried by a locale variant', async () => {
      const v1 = await store.templates.create('t1', 'digest', 'sms', { text: 'a' }, T0, null, 'news');
      assert.equal(v1?.category, 'news');
      await store.templates.update('t1', 'digest', 'sms', { text: 'b' }, T0 + 1, null, null);
      assert.equal((await store.templates.get('t1', 'digest'))?.category, null);
      assert.equal((await store.templates.getVersion('t1', 'digest', 1))?.category, 'news', 'v1 keeps it');
      await store.templates.update('t1', 'digest', 'sms', { text: 'c' }, T0 + 2, null, 'promo');
      const v4 = await store.templates.putVariant('t1', 'digest', 'fr', { text: 'd' }, T0 + 3);
      assert.equal(v4?.category, 'promo', 'a variant saves the current category with the new version');
      const [listed] = await store.templates.list('t1', 1, 'diges');
      assert.equal(listed?.key, 'digest');
      assert.equal(listed?.category, 'promo');
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

    /** The variants of one version, as locale → subject. */
    const subjects = async (tenant: string, key: string, version: number) =>
      Object.fromEntries(
        (await store.templates.variants(tenant, [{ key, version }])).map((v) => [
          v.locale,
          v.content.subject,
        ]),
      );

    it('saves a new version for each variant change, and every version keeps its own variants', async () => {
      await store.templates.create('loc', 'hello', 'email', { subject: 'Hi', text: 'a' }, T0, { n: 1 });
      const v2 = await store.templates.putVariant(
        'loc',
        'hello',
        'fr',
        { subject: 'Salut', text: 'a' },
        T0 + 1,
      );
      assert.equal(v2?.version, 2);
      assert.deepEqual(v2?.content, { subject: 'Hi', text: 'a' }, 'the template itself is unchanged');
      assert.deepEqual(v2?.sampleVariables, { n: 1 });
      await store.templates.putVariant('loc', 'hello', 'de', { subject: 'Hallo', text: 'a' }, T0 + 2);
      const v4 = await store.templates.putVariant(
        'loc',
        'hello',
        'fr',
        { subject: 'Bonjour', text: 'a' },
        T0 + 3,
      );
      assert.equal(v4?.version, 4);
      // A new version of the template itself carries the variants forward.
      const v5 = await store.templates.update(
        'loc',
        'hello',
        'email',
        { subject: 'Hello', text: 'b' },
        T0 + 4,
      );
      assert.deepEqual(await subjects('loc', 'hello', 5), { de: 'Hallo', fr: 'Bonjour' });
      assert.equal(v5?.version, 5);
      assert.equal(
        await store.templates
          .removeVariant('loc', 'hello', 'fr', T0 + 5)
          .then((r) => typeof r === 'object' && r.version),
        6,
      );
      assert.deepEqual(await subjects('loc', 'hello', 6), { de: 'Hallo' });
      // Pinned versions never change.
      assert.deepEqual(await subjects('loc', 'hello', 1), {});
      assert.deepEqual(await subjects('loc', 'hello', 2), { fr: 'Salut' });
      assert.deepEqual(await subjects('loc', 'hello', 4), { de: 'Hallo', fr: 'Bonjour' });
      const carried = await store.templates.variants('loc', [{ key: 'hello', version: 6 }]);
      assert.equal(carried[0]?.updatedAt, T0 + 2, 'a carried variant keeps the time it was saved');
    });

    it('says what was missing when a variant cannot be removed, and changes nothing', async () => {
      await store.templates.create('loc', 'bye', 'sms', { text: 'Bye' }, T0);
      assert.equal(await store.templates.removeVariant('loc', 'bye', 'fr', T0), 'no-variant');
      assert.equal(await store.templates.removeVariant('loc', 'nothing', 'fr', T0), 'no-template');
      assert.equal(await store.templates.putVariant('loc', 'nothing', 'fr', { text: 'x' }, T0), null);
      assert.equal((await store.templates.get('loc', 'bye'))?.version, 1);
      assert.equal(
        await store.templates.putVariant('other', 'bye', 'fr', { text: 'x' }, T0),
        null,
        'another tenant',
      );
    });

    it('reads the variants of several versions at once, and no other tenant’s', async () => {
      await store.templates.create('many', 'a', 'sms', { text: 'a' }, T0);
      await store.templates.create('many', 'b', 'sms', { text: 'b' }, T0);
      await store.templates.putVariant('many', 'a', 'fr', { text: 'a-fr' }, T0);
      await store.templates.putVariant('many', 'b', 'es', { text: 'b-es' }, T0);
      await store.templates.putVariant('many', 'b', 'de', { text: 'b-de' }, T0);
      const found = await store.templates.variants('many', [
        { key: 'a', version: 2 },
        { key: 'b', version: 3 },
      ]);
      assert.deepEqual(
        found.map((v) => `${v.key} ${v.version} ${v.locale} ${v.content.text}`),
        ['a 2 fr a-fr', 'b 3 de b-de', 'b 3 es b-es'],
      );
      assert.deepEqual(await store.templates.variants('elsewhere', [{ key: 'a', version: 2 }]), []);
      assert.deepEqual(await store.templates.variants('many', []), []);
    });
  });
}
