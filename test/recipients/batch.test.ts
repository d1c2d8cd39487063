// POST /recipients/batch (docs/recipients.md): up to 1000 full replacements, each on its own, one
// commit, 207 with a result per item; on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { authHeader } from '../helpers/auth.ts';
import { heldBatchApi } from '../helpers/held-batch.ts';
import { stopSharedPostgres } from '../helpers/postgres.ts';
import { sms } from '../notifications/fixtures.ts';
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

// Issue 50: a recipients batch is read and checked in a batch thread, never on the event loop
// (as POST /notifications/batch, decision record 0010), and never ahead of a notification batch
// (decision record 0037). The app's two batch threads hold recipients bodies only, until released.
describe('POST /recipients/batch: the body is read off the event loop', () => {
  let held: Awaited<ReturnType<typeof heldBatchApi>>;
  let admin: { authorization: string };
  before(async () => {
    held = await heldBatchApi('"recipients"', { threads: 2, holdKind: 'recipients' });
    admin = await authHeader(held.deps, { role: 'admin' });
  });
  after(() => held.close());

  const post = (payload: string, headers = admin) =>
    held.app.inject({
      method: 'POST',
      url: '/recipients/batch',
      headers: { ...headers, 'content-type': 'application/json' },
      payload,
    });

  it('answers GET /health while a 6.9 MiB batch is held in its thread; the event loop never parses it', async () => {
    const { deps, app } = held;
    const recipients = Array.from({ length: 1000 }, (_, n) => ({
      recipientId: `big-${n}`,
      email: `big-${n}@example.com`,
      data: { note: 'x'.repeat(7200) },
    }));
    recipients[3] = { ...recipients[3], email: 'nope' } as (typeof recipients)[number];
    const payload = JSON.stringify({ recipients });
    assert.ok(payload.length > 6.9 * 1024 * 1024, `${payload.length} bytes`);
    let answered = false;
    const batch = post(payload).finally(() => {
      answered = true;
    });
    while (held.arrived() === 0 && !answered) await new Promise((resolve) => setTimeout(resolve, 1));
    assert.equal(held.arrived(), 1, 'the body reached a batch thread');
    const health = await app.inject({ method: 'GET', url: '/health' });
    assert.equal(health.statusCode, 200);
    assert.equal(answered, false, 'the batch is still held in its thread');
    held.release();
    const response = await batch;
    assert.equal(response.statusCode, 207);
    const { results } = response.json();
    assert.equal(results.filter((r: { status?: number }) => r.status === 201).length, 999);
    assert.deepEqual(
      results[3].error.errors.map((e: { path: string }) => e.path),
      ['body/recipients/3/email'],
    );
    assert.equal(
      (await deps.store.recipients.get('default', 'big-999'))?.profile.email,
      'big-999@example.com',
    );
    assert.equal(held.bodyParses(), 0, 'the event loop parsed the batch body');

    // Bodies that are no batch get the answers Fastify's parser and the schema gave, and write nothing.
    const malformed = 'The body is not valid JSON, or holds a __proto__ or constructor.prototype key.';
    const cases: Array<[string, string, string]> = [
      ['', 'MALFORMED_BODY', 'The JSON body is empty.'],
      ['{', 'MALFORMED_BODY', malformed],
      ['{"recipients":[{"recipientId":"p"}],"__proto__":{"x":1}}', 'MALFORMED_BODY', malformed],
      ['[]', 'VALIDATION_FAILED', 'The batch does not match the schema.'],
      ['{"recipients":[]}', 'VALIDATION_FAILED', 'body/recipients: must have at least 1 item'],
    ];
    for (const [body, code, detail] of cases) {
      const refused = await post(body);
      assert.equal(refused.statusCode, 400, body);
      assert.equal(refused.json().code, code, body);
      const said = [
        refused.json().detail,
        ...(refused.json().errors ?? []).map(
          (e: { path: string; message: string }) => `${e.path}: ${e.message}`,
        ),
      ];
      assert.ok(said.includes(detail), `${body}: ${JSON.stringify(refused.json())}`);
    }
    assert.equal(await deps.store.recipients.get('default', 'p'), null);
  });

  it("leaves a thread to notification batches: another tenant's, and its own tenant's CRITICAL behind its imports", async () => {
    const { deps, app } = held;
    held.hold();
    const other = await authHeader(deps, { role: 'admin', tenant: 'other' });
    const sender = await authHeader(deps, { role: 'sender' });
    const otherSender = await authHeader(deps, { role: 'sender', tenant: 'other' });
    const importOf = (tag: string, pad: number) =>
      JSON.stringify({
        recipients: Array.from({ length: 1000 }, (_, n) => ({
          recipientId: `${tag}-${n}`,
          data: { note: 'x'.repeat(pad) },
        })),
      });
    const submitted = held.submitted().recipients;
    // This tenant's 6.9 MiB import takes a thread and is held there.
    const first = post(importOf('first', 7200));
    while (held.arrived() === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    // Another tenant's import and this tenant's second one wait for a thread, queued before the
    // notification batches (without the rule, the other tenant's import took the second thread).
    const imports = [first, post(importOf('theirs', 10), other), post(importOf('second', 10))];
    while (held.submitted().recipients < submitted + 3) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    let answered = 0;
    const notify = (headers: { authorization: string }, priority: string) =>
      app
        .inject({
          method: 'POST',
          url: '/notifications/batch',
          headers,
          payload: { notifications: [sms({ priority }), sms({ priority })] },
        })
        .finally(() => {
          answered += 1;
        });
    const batches = [notify(otherSender, 'NORMAL'), notify(sender, 'CRITICAL')];
    // Both answered while the imports are held, or a second import took the last thread.
    while (answered < 2 && held.arrived() < 2) await new Promise((resolve) => setTimeout(resolve, 1));
    assert.equal(held.arrived(), 1, 'an import took the thread the notification batches need');
    for (const response of await Promise.all(batches)) {
      assert.equal(response.statusCode, 207, response.body);
      const statuses = response.json().results.map((r: { status: string }) => r.status);
      assert.deepEqual(statuses, ['QUEUED', 'QUEUED']);
    }
    held.release();
    for (const response of await Promise.all(imports)) {
      assert.equal(response.statusCode, 207);
      assert.ok(response.json().results.every((r: { status?: number }) => r.status === 201));
    }
    assert.equal(held.arrived(), 3, 'every import reached a thread');
    assert.ok(await deps.store.recipients.get('other', 'theirs-999'));
    assert.ok(await deps.store.recipients.get('default', 'second-0'));
    assert.equal(await deps.store.recipients.get('default', 'theirs-0'), null, 'written in its own tenant');
  });
});
