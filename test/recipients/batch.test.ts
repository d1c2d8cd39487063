// POST /recipients/batch (docs/recipients.md): up to 1000 full replacements, each on its own, one
// commit, 207 with a result per item; on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { stopSharedPostgres } from '../helpers/postgres.ts';
import { device, KINDS, type RecipientsApp, recipientsApp } from './fixtures.ts';

for (const kind of KINDS) {
  describe(`POST /recipients/batch (${kind})`, () => {
    let t: RecipientsApp;
    before(async () => {
      t = await recipientsApp(kind);
    });
    after(async () => {
      await t.close();
      if (kind === 'postgres') await stopSharedPostgres();
    });

    const batch = (body: unknown, headers = t.admin) =>
      t.app.inject({
        method: 'POST',
        url: '/recipients/batch',
        headers: { ...headers, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });

    it('creates, replaces and refuses each item on its own (207), in order', async () => {
      await t.deps.store.recipients.put('default', [{ id: 'known', profile: { name: 'Old' } }], 0);
      await t.deps.store.recipients.setPreferences(
        'default',
        'known',
        { channels: { sms: false }, categories: {} },
        0,
      );
      const response = await batch({
        recipients: [
          { recipientId: 'new-1', email: 'new@example.com', push: [device(1)] },
          { recipientId: 'known', phone: '+15550101234' },
          { recipientId: 'bad-email', email: 'nope' },
          { email: 'no-id@example.com' },
          { recipientId: 'has space' },
          { recipientId: 'nul', name: 'a\u0000b' },
          { recipientId: 'extra', colour: 'red' },
          'not an object',
        ],
      });
      assert.equal(response.statusCode, 207, response.body);
      const { results } = response.json();
      assert.deepEqual(results.slice(0, 2), [
        { index: 0, recipientId: 'new-1', status: 201 },
        { index: 1, recipientId: 'known', status: 200 },
      ]);
      const paths = results
        .slice(2)
        .map((r: { index: number; error: { code: string; errors: Array<{ path: string }> } }) => {
          assert.equal(r.error.code, 'VALIDATION_FAILED');
          return [r.index, r.error.errors.map((e) => e.path)];
        });
      assert.deepEqual(paths, [
        [2, ['body/recipients/2/email']],
        [3, ['body/recipients/3/recipientId']],
        [4, ['body/recipients/4/recipientId']],
        [5, ['body/recipients/5/name']],
        [6, ['body/recipients/6/colour']],
        [7, ['body/recipients/7']],
      ]);
      const store = t.deps.store.recipients;
      assert.deepEqual(
        (await store.get('default', 'known'))?.profile,
        { phone: '+15550101234' },
        'replaced whole',
      );
      assert.deepEqual((await store.get('default', 'known'))?.preferences.channels, { sms: false });
      for (const id of ['bad-email', 'nul', 'extra']) assert.equal(await store.get('default', id), null, id);
    });

    it('takes 1000 recipients and a body far above the usual 64 KiB limit', async () => {
      const recipients = Array.from({ length: 1000 }, (_, n) => ({
        recipientId: `bulk-${n}`,
        email: `bulk-${n}@example.com`,
        data: { note: 'x'.repeat(1000) },
      }));
      const response = await batch({ recipients });
      assert.equal(response.statusCode, 207, response.body.slice(0, 300));
      const { results } = response.json();
      assert.equal(results.filter((r: { status?: number }) => r.status === 201).length, 1000);
      assert.equal(
        (await t.deps.store.recipients.list('default', { limit: 2000, after: 'bulk-' })).length >= 1000,
        true,
      );
    });

    it('refuses a batch that is not one (400) and one of 1001 items, writing nothing', async () => {
      const cases: unknown[] = [
        { recipients: [] },
        { recipients: Array.from({ length: 1001 }, (_, n) => ({ recipientId: `over-${n}` })) },
        { recipients: [{ recipientId: 'x' }], more: true },
        [{ recipientId: 'x' }],
        {},
      ];
      for (const body of cases) {
        const response = await batch(body);
        assert.equal(response.statusCode, 400, response.body.slice(0, 200));
        assert.equal(response.json().code, 'VALIDATION_FAILED');
      }
      assert.equal(await t.deps.store.recipients.get('default', 'over-0'), null);
      assert.equal(await t.deps.store.recipients.get('default', 'x'), null);
    });

    it('needs recipients:write (403) and writes into the caller tenant only', async () => {
      assert.equal((await batch({ recipients: [{ recipientId: 'v' }] }, t.viewer)).statusCode, 403);
      assert.equal((await batch({ recipients: [{ recipientId: 'v' }] }, t.reader)).statusCode, 403);
      const theirs = await batch({ recipients: [{ recipientId: 'known', name: 'Theirs' }] }, t.other);
      assert.deepEqual(theirs.json().results, [{ index: 0, recipientId: 'known', status: 201 }]);
      assert.equal((await t.deps.store.recipients.get('other', 'known'))?.profile.name, 'Theirs');
      assert.notEqual((await t.deps.store.recipients.get('default', 'known'))?.profile.name, 'Theirs');
    });
  });
}
