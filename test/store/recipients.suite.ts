import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/port/index.ts';
import { T0 } from './queue-fixtures.ts';
import { freshStores } from './suites.ts';

const ada = { email: 'ada@example.com', locale: 'fr-CA', data: { plan: 'pro' } };

/** Recipients and categories (docs/recipients.md): create or replace, preferences kept, tenancy, paging. */
export function recipientsSuite(name: string, open: () => Promise<Store>): void {
  describe(`recipients store (${name})`, () => {
    const fresh = freshStores(open);

    it('creates, then replaces the profile whole and keeps the preferences', async () => {
      const store = await fresh();
      const [first] = await store.recipients.put('t1', [{ id: 'u-1', profile: ada }], T0);
      assert.equal(first?.created, true);
      assert.deepEqual(first?.record.profile, ada);
      assert.deepEqual(first?.record.preferences, { channels: {}, categories: {} });
      const preferences = { channels: { sms: false }, categories: { marketing: { email: false } } };
      const chosen = await store.recipients.setPreferences('t1', 'u-1', preferences, T0 + 1);
      assert.deepEqual(chosen?.preferences, preferences);
      const [replaced] = await store.recipients.put(
        't1',
        [{ id: 'u-1', profile: { phone: '+15550001234' } }],
        T0 + 2,
      );
      assert.equal(replaced?.created, false);
      assert.deepEqual(replaced?.record.profile, { phone: '+15550001234' });
      assert.deepEqual(replaced?.record.preferences, preferences);
      assert.equal(replaced?.record.createdAt, T0);
      assert.equal(replaced?.record.updatedAt, T0 + 2);
      assert.equal(await store.recipients.setPreferences('t1', 'nobody', preferences, T0), null);
    });

    it('puts a batch in input order; an ID given twice keeps its last profile and is created once', async () => {
      const store = await fresh();
      await store.recipients.put('t1', [{ id: 'b', profile: {} }], T0);
      const results = await store.recipients.put(
        't1',
        [
          { id: 'a', profile: { name: 'first' } },
          { id: 'b', profile: { name: 'B' } },
          { id: 'a', profile: { name: 'second' } },
        ],
        T0 + 1,
      );
      assert.deepEqual(
        results.map((r) => [r.record.id, r.created]),
        [
          ['a', true],
          ['b', false],
          ['a', false],
        ],
      );
      assert.deepEqual((await store.recipients.get('t1', 'a'))?.profile, { name: 'second' });
    });

    it('writes a batch like put, answering only whether each was created', async () => {
      const store = await fresh();
      await store.recipients.put('t1', [{ id: 'b', profile: {} }], T0);
      await store.recipients.setPreferences('t1', 'b', { channels: { sms: false }, categories: {} }, T0);
      const created = await store.recipients.write(
        't1',
        [
          { id: 'a', profile: { name: 'first' } },
          { id: 'b', profile: { name: 'B' } },
          { id: 'a', profile: { name: 'second' } },
        ],
        T0 + 1,
      );
      assert.deepEqual(created, [true, false, false]);
      assert.deepEqual((await store.recipients.get('t1', 'a'))?.profile, { name: 'second' });
      const b = await store.recipients.get('t1', 'b');
      assert.deepEqual(b?.profile, { name: 'B' });
      assert.deepEqual(b?.preferences.channels, { sms: false }, 'the preferences stay');
      assert.equal(b?.createdAt, T0);
      assert.equal(b?.updatedAt, T0 + 1);
      assert.deepEqual(await store.recipients.write('t1', [], T0), []);
    });

    it('writes the preferences an entry gives with its profile (an import), keeping the others', async () => {
      const store = await fresh();
      await store.recipients.put('t1', [{ id: 'k', profile: {} }], T0);
      await store.recipients.setPreferences('t1', 'k', { channels: { sms: false }, categories: {} }, T0);
      const given = { channels: { email: true }, categories: { news: { push: false } } };
      const created = await store.recipients.write(
        't1',
        [
          { id: 'k', profile: { name: 'K' } },
          { id: 'p', profile: { name: 'P' }, preferences: { channels: {}, categories: {} } },
          { id: 'p', profile: { name: 'P2' }, preferences: given },
        ],
        T0 + 1,
      );
      assert.deepEqual(created, [false, true, false]);
      assert.deepEqual((await store.recipients.get('t1', 'k'))?.preferences.channels, { sms: false });
      const p = await store.recipients.get('t1', 'p');
      assert.deepEqual(p?.profile, { name: 'P2' });
      assert.deepEqual(p?.preferences, given, 'an ID given twice: its last preferences');
      await store.recipients.write('t1', [{ id: 'k', profile: {}, preferences: given }], T0 + 2);
      assert.deepEqual((await store.recipients.get('t1', 'k'))?.preferences, given, 'replaced');
    });

    it('replaces a profile only while it is the one read (a merge patch never loses a change)', async () => {
      const store = await fresh();
      const [first] = await store.recipients.put('t1', [{ id: 'u-1', profile: ada }], T0);
      const preferences = { channels: { sms: false }, categories: {} };
      await store.recipients.setPreferences('t1', 'u-1', preferences, T0 + 1);
      const read = first?.record.profile ?? {};
      const patched = await store.recipients.replaceIf('t1', 'u-1', read, { ...read, name: 'Ada' }, T0 + 2);
      assert.deepEqual(patched?.profile, { ...ada, name: 'Ada' });
      assert.deepEqual(patched?.preferences, preferences, 'the preferences stay');
      assert.equal(patched?.updatedAt, T0 + 2);
      // A second patch of the same read finds the profile changed: nothing is written.
      assert.equal(await store.recipients.replaceIf('t1', 'u-1', read, { name: 'stale' }, T0 + 3), null);
      assert.equal((await store.recipients.get('t1', 'u-1'))?.profile.name, 'Ada');
      assert.equal(await store.recipients.replaceIf('t2', 'u-1', read, {}, T0 + 3), null, 'another tenant');
      assert.equal(await store.recipients.replaceIf('t1', 'nobody', {}, {}, T0 + 3), null);
    });

    it('keeps tenants apart, finds many in one read, lists in ID order and removes', async () => {
      const store = await fresh();
      await store.recipients.put(
        't1',
        ['c', 'a', 'B', 'b'].map((id) => ({ id, profile: { name: id } })),
        T0,
      );
      await store.recipients.put('t2', [{ id: 'a', profile: { name: 'other' } }], T0);
      assert.equal(await store.recipients.get('t2', 'b'), null);
      // The IDs known in the tenant, each once (one given twice), in one read; another tenant's are not.
      assert.deepEqual((await store.recipients.known('t1', ['a', 'x', 'b', 'a', 'A'])).sort(), ['a', 'b']);
      assert.deepEqual(await store.recipients.known('t2', ['a', 'c']), ['a']);
      assert.deepEqual(await store.recipients.known('t2', []), []);
      // Bytewise order on both databases: upper case before lower case.
      const first = await store.recipients.list('t1', { limit: 2 });
      assert.deepEqual(
        first.map((r) => r.id),
        ['B', 'a'],
      );
      const next = await store.recipients.list('t1', { limit: 2, after: 'a' });
      assert.deepEqual(
        next.map((r) => r.id),
        ['b', 'c'],
      );
      assert.equal(await store.recipients.remove('t1', 'a'), true);
      assert.equal(await store.recipients.remove('t1', 'a'), false);
      assert.equal((await store.recipients.get('t2', 'a'))?.profile.name, 'other');
    });

    it('creates and replaces categories, finds them across tenants and removes them', async () => {
      const store = await fresh();
      const fields = { description: 'News', required: false, defaultChannels: { sms: false } };
      const made = await store.categories.put('t1', 'marketing', fields, T0);
      assert.equal(made.created, true);
      assert.deepEqual(made.record.defaultChannels, { sms: false });
      const again = await store.categories.put('t1', 'marketing', { ...fields, required: true }, T0 + 1);
      assert.equal(again.created, false);
      assert.equal(again.record.required, true);
      assert.equal(again.record.createdAt, T0);
      await store.categories.put(
        't2',
        'billing',
        { description: null, required: true, defaultChannels: {} },
        T0,
      );
      const found = await store.categories.among([
        { tenant: 't1', name: 'marketing' },
        { tenant: 't1', name: 'billing' },
      ]);
      assert.deepEqual(
        found.map((c) => c.name),
        ['marketing'],
      );
      assert.deepEqual(
        (await store.categories.list('t1', { limit: 10 })).map((c) => c.name),
        ['marketing'],
      );
      assert.equal(await store.categories.remove('t1', 'marketing'), true);
      assert.equal(await store.categories.get('t1', 'marketing'), null);
    });

    it('changes preferences from what they are, losing no concurrent change', async () => {
      const store = await fresh();
      await store.recipients.put('t1', [{ id: 'u-1', profile: {} }], T0);
      await store.recipients.put('t2', [{ id: 'u-1', profile: {} }], T0);
      const names = Array.from({ length: 20 }, (_, i) => `c${i}`);
      // Each change adds one category to what it reads: a read and write apart would lose some.
      const results = await Promise.all(
        names.map((name, i) =>
          store.recipients.changePreferences(
            't1',
            'u-1',
            (current) => ({ ...current, categories: { ...current.categories, [name]: { email: false } } }),
            T0 + 1 + i,
          ),
        ),
      );
      assert.ok(results.every((r) => r !== null));
      const record = await store.recipients.get('t1', 'u-1');
      assert.deepEqual(Object.keys(record?.preferences.categories ?? {}).sort(), [...names].sort());
      assert.ok((record?.updatedAt ?? 0) > T0);
      assert.deepEqual((await store.recipients.get('t2', 'u-1'))?.preferences, {
        channels: {},
        categories: {},
      });
      assert.equal(await store.recipients.changePreferences('t1', 'nobody', (p) => p, T0), null);
    });
  });
}
