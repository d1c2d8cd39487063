// The recipients API (docs/recipients.md, docs/recipients.md): PUT, PATCH, GET, the list and DELETE,
// on SQLite and on PostgreSQL; scopes; another tenant's recipient is 404; every bad input is a
// 400 that changes nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { stopSharedPostgres } from '../helpers/postgres.ts';
import { device, KINDS, PUBLIC_URL, type RecipientsApp, recipientsApp, subscription } from './fixtures.ts';

for (const kind of KINDS) {
  describe(`recipients API (${kind})`, () => {
    let t: RecipientsApp;
    before(async () => {
      t = await recipientsApp(kind);
    });
    after(async () => {
      await t.close();
      if (kind === 'postgres') await stopSharedPostgres();
    });

    type Method = 'GET' | 'PUT' | 'PATCH' | 'DELETE';
    const call = (
      method: Method,
      url: string,
      payload?: unknown,
      headers: Record<string, string> = t.admin,
      type = 'application/json',
    ) =>
      t.app.inject({
        method,
        url,
        headers: { ...headers, ...(payload === undefined ? {} : { 'content-type': type }) },
        ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
      });
    const stored = (id: string, tenant = 'default') => t.deps.store.recipients.get(tenant, id);

    it('creates (201) and replaces (200) a profile, and shows it whole with its preferences link', async () => {
      const created = await call('PUT', '/recipients/ada@example.com', {
        email: 'ada@example.com',
        push: [device(1), subscription()],
        locale: 'fr-ca',
        timezone: 'europe/paris',
        data: { plan: 'pro' },
      });
      assert.equal(created.statusCode, 201, created.body);
      assert.equal(created.headers.location, '/recipients/ada%40example.com');
      const body = created.json();
      assert.equal(body.recipientId, 'ada@example.com');
      assert.equal(body.email, 'ada@example.com', 'addresses unmasked');
      assert.equal(body.locale, 'fr-CA', 'the canonical spelling');
      assert.equal(body.timezone, 'Europe/Paris');
      assert.equal(body.phone, null);
      assert.equal(body.name, null);
      assert.deepEqual(body.push, [device(1), subscription()]);
      const prefix = `${PUBLIC_URL}/preferences/`;
      assert.ok(body.preferencesUrl.startsWith(prefix), body.preferencesUrl);
      assert.deepEqual(await t.deps.preferenceTokens.open(body.preferencesUrl.slice(prefix.length)), {
        tenant: 'default',
        id: 'ada@example.com',
      });

      t.clock.advance(1000);
      const replaced = await call('PUT', '/recipients/ada@example.com', {
        phone: '+15550101234',
        name: null,
      });
      assert.equal(replaced.statusCode, 200, replaced.body);
      assert.equal(replaced.headers.location, undefined);
      const again = replaced.json();
      assert.equal(again.email, null, 'a field left out is removed');
      assert.deepEqual(again.push, []);
      assert.deepEqual(again.data, {});
      assert.equal(again.phone, '+15550101234');
      assert.equal(again.createdAt, body.createdAt);
      assert.notEqual(again.updatedAt, body.updatedAt);
      const read = await call('GET', '/recipients/ada@example.com');
      assert.equal(read.statusCode, 200);
      assert.deepEqual(read.json(), again);
    });

    it('refuses every bad profile with 400 naming the field, and changes nothing', async () => {
      const before = { email: 'bo@example.com', name: 'Bo' };
      assert.equal((await call('PUT', '/recipients/bo', before)).statusCode, 201);
      const tooManyTargets = Array.from({ length: 11 }, (_, n) => device(n));
      const cases: Array<[body: unknown, path: string, message: RegExp]> = [
        [{ email: 'not an address' }, 'body/email', /email address/],
        [{ phone: '5550101234' }, 'body/phone', /E\.164/],
        [{ push: tooManyTargets }, 'body/push', /more than 10 items/],
        [{ push: [{ deviceToken: 'short', platform: 'apns' }] }, 'body/push/0/deviceToken', /at least 8/],
        [{ push: [{ deviceToken: 'a1b2c3d4e5f6', platform: 'gcm' }] }, 'body/push/0/platform', /apns, fcm/],
        [
          { push: [subscription('https://127.0.0.1/push/1')] },
          'body/push/0/subscription/endpoint',
          /non-public address/,
        ],
        [{ push: [subscription('http://push.example.com/1')] }, 'body/push/0/subscription/endpoint', /https/],
        [{ locale: 'not a locale!' }, 'body/locale', /BCP 47/],
        [{ timezone: 'Mars/Olympus' }, 'body/timezone', /IANA time zone/],
        [{ timezone: '+01:00' }, 'body/timezone', /IANA time zone/],
        [{ data: { blob: 'x'.repeat(9 * 1024) } }, 'body/data', /8192 bytes/],
        [{ data: [1, 2] }, 'body/data', /must be object/],
        [{ emial: 'bo@example.com' }, 'body/emial', /additional property 'emial'/],
        [{ name: 42 }, 'body/name', /must be string/],
        [['bo@example.com'], 'body', /must be object/],
      ];
      for (const [body, path, message] of cases) {
        const response = await call('PUT', '/recipients/bo', body);
        assert.equal(response.statusCode, 400, `${JSON.stringify(body).slice(0, 80)}: ${response.body}`);
        assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
        const problem = response.json();
        assert.equal(problem.code, 'VALIDATION_FAILED');
        const error = problem.errors.find((e: { path: string }) => e.path === path);
        assert.ok(error, `${path} in ${response.body}`);
        assert.match(error.message, message);
      }
      assert.deepEqual((await stored('bo'))?.profile, before, 'nothing changed');
      // A deeply nested data is refused without overflowing a stack.
      const tooDeep = await t.app.inject({
        method: 'PUT',
        url: '/recipients/bo',
        headers: { ...t.admin, 'content-type': 'application/json' },
        payload: `{"data":${'{"a":'.repeat(10_000)}{}${'}'.repeat(10_000)}}`,
      });
      assert.equal(tooDeep.statusCode, 400, tooDeep.body);
      const badId = await call('PUT', `/recipients/${'x'.repeat(129)}`, {});
      assert.equal(badId.statusCode, 400);
      assert.equal(badId.json().errors[0].path, 'params/recipientId');
      assert.equal((await call('PUT', '/recipients/bad%20id', {})).statusCode, 400);
      assert.equal((await call('PUT', '/recipients/bo', '{"email":', t.admin, 'text/plain')).statusCode, 415);
    });

    it('merges a JSON merge patch (RFC 7396) into the profile and keeps the preferences', async () => {
      await call('PUT', '/recipients/cy', {
        email: 'cy@example.com',
        phone: '+15550101234',
        push: [device(1)],
        data: { plan: 'pro', seats: 3 },
      });
      const preferences = { channels: { sms: false }, categories: { marketing: { email: false } } };
      await t.deps.store.recipients.setPreferences('default', 'cy', preferences, t.clock.now());
      const patched = await call(
        'PATCH',
        '/recipients/cy',
        { phone: null, push: [device(2)], locale: 'en-gb', data: { seats: null, team: 'a' } },
        t.admin,
        'application/merge-patch+json',
      );
      assert.equal(patched.statusCode, 200, patched.body);
      const body = patched.json();
      assert.equal(body.email, 'cy@example.com', 'a field not in the patch stays');
      assert.equal(body.phone, null, 'null removes');
      assert.deepEqual(body.push, [device(2)], 'a list is replaced whole');
      assert.equal(body.locale, 'en-GB');
      assert.deepEqual(body.data, { plan: 'pro', team: 'a' }, 'objects merge key by key');
      assert.deepEqual((await stored('cy'))?.preferences, preferences, 'the preferences stay');
      // application/json is taken as a merge patch too.
      const plain = await call('PATCH', '/recipients/cy', { name: 'Cy' });
      assert.equal(plain.statusCode, 200, plain.body);
      assert.equal(plain.json().name, 'Cy');
      const profile = (await stored('cy'))?.profile;
      for (const [patch, type] of [
        [[{ op: 'remove', path: '/phone' }], 'application/json'],
        ['cy@example.com', 'application/merge-patch+json'],
        [null, 'application/merge-patch+json'],
      ] as const) {
        const refused = await call('PATCH', '/recipients/cy', patch, t.admin, type);
        assert.equal(refused.statusCode, 400, `${JSON.stringify(patch)}: ${refused.body}`);
        assert.deepEqual(refused.json().errors, [{ path: 'body', message: 'must be object' }]);
      }
      const badResult = await call('PATCH', '/recipients/cy', { email: 'nope', colour: 'red' });
      assert.equal(badResult.statusCode, 400);
      assert.deepEqual(
        badResult
          .json()
          .errors.map((e: { path: string }) => e.path)
          .sort(),
        ['body/colour', 'body/email'],
      );
      assert.deepEqual((await stored('cy'))?.profile, profile, 'a refused patch changes nothing');
      assert.equal((await call('PATCH', '/recipients/nobody', { name: 'X' })).statusCode, 404);
    });

    it('lists the tenant recipients in ID order, page by page', async () => {
      for (const id of ['list-c', 'list-a', 'list-b', 'list-D']) await call('PUT', `/recipients/${id}`, {});
      const ids: string[] = [];
      let next: string | null = null;
      do {
        const url: string = `/recipients?limit=2${next ? `&cursor=${next}` : ''}`;
        const page = await call('GET', url);
        assert.equal(page.statusCode, 200, page.body);
        ids.push(...page.json().items.map((r: { recipientId: string }) => r.recipientId));
        next = page.json().nextCursor;
      } while (next);
      const listed = ids.filter((id) => id.startsWith('list-'));
      assert.deepEqual(listed, ['list-D', 'list-a', 'list-b', 'list-c']);
      assert.deepEqual(
        [...ids].sort((a, b) => (a < b ? -1 : 1)),
        ids,
        'bytewise order',
      );
      assert.equal((await call('GET', '/recipients?cursor=bogus')).statusCode, 400);
      assert.equal((await call('GET', '/recipients?limit=501')).statusCode, 400);
      assert.deepEqual((await call('GET', '/recipients', undefined, t.other)).json().items, []);
    });

    it('erases a recipient and its preferences (204), then knows it no more (404)', async () => {
      await call('PUT', '/recipients/dee', { email: 'dee@example.com' });
      await t.deps.store.recipients.setPreferences(
        'default',
        'dee',
        { channels: { email: false }, categories: {} },
        0,
      );
      assert.equal((await call('DELETE', '/recipients/dee')).statusCode, 204);
      assert.equal(await stored('dee'), null);
      assert.equal((await call('GET', '/recipients/dee')).statusCode, 404);
      assert.equal((await call('DELETE', '/recipients/dee')).statusCode, 404);
      // Made again, it starts with no preferences.
      await call('PUT', '/recipients/dee', {});
      assert.deepEqual((await stored('dee'))?.preferences, { channels: {}, categories: {} });
    });

    it("answers another tenant's recipient 404, and keeps each tenant's own of the same ID apart", async () => {
      await call('PUT', '/recipients/shared', { email: 'mine@example.com' });
      assert.equal((await call('GET', '/recipients/shared', undefined, t.other)).statusCode, 404);
      assert.equal((await call('PATCH', '/recipients/shared', { name: 'x' }, t.other)).statusCode, 404);
      assert.equal((await call('DELETE', '/recipients/shared', undefined, t.other)).statusCode, 404);
      const theirs = await call('PUT', '/recipients/shared', { email: 'theirs@example.com' }, t.other);
      assert.equal(theirs.statusCode, 201, 'another person');
      assert.equal((await stored('shared'))?.profile.email, 'mine@example.com');
      assert.equal((await stored('shared', 'other'))?.profile.email, 'theirs@example.com');
    });

    it('needs recipients:read to read and recipients:write to change (403)', async () => {
      await call('PUT', '/recipients/eve', { name: 'Eve' });
      const checks: Array<[Method, string, unknown, Record<string, string>, number]> = [
        ['GET', '/recipients/eve', undefined, t.viewer, 403],
        ['GET', '/recipients', undefined, t.viewer, 403],
        ['PUT', '/recipients/eve', {}, t.viewer, 403],
        ['GET', '/recipients/eve', undefined, t.reader, 200],
        ['PUT', '/recipients/eve', {}, t.reader, 403],
        ['PATCH', '/recipients/eve', {}, t.reader, 403],
        ['DELETE', '/recipients/eve', undefined, t.reader, 403],
        ['GET', '/recipients/eve', undefined, t.writer, 403],
        ['PATCH', '/recipients/eve', { name: 'Eve 2' }, t.writer, 200],
      ];
      for (const [method, url, payload, headers, status] of checks) {
        const response = await call(method, url, payload, headers);
        assert.equal(response.statusCode, status, `${method} ${url}: ${response.body}`);
      }
      assert.equal((await stored('eve'))?.profile.name, 'Eve 2');
    });
  });
}
