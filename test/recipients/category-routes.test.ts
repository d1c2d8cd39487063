// Categories and a recipient's preferences over HTTP (docs/preferences.md), on SQLite and PostgreSQL:
// declaring, listing and deleting categories; reading, replacing and merge-patching preferences;
// bad input refused with nothing changed; scopes; another tenant's recipient or category is 404.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { authHeader, authTestApp } from '../helpers/auth.ts';
import { type PostgresServer, sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';

type T = Awaited<ReturnType<typeof authTestApp>>;

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`categories and preferences routes (${kind})`, () => {
    let server: PostgresServer | undefined;
    let t: T;
    let admin: { authorization: string };
    before(async () => {
      if (kind === 'postgres') server = await sharedPostgres();
      const env: Record<string, string> = server
        ? { DATABASE_URL: await server.createDatabase('herald_prefs') }
        : {};
      t = await authTestApp(env);
      admin = await authHeader(t.deps, { role: 'admin' });
    });
    after(async () => {
      await t?.close();
      if (server) await stopSharedPostgres();
    });

    const call = (
      method: 'GET' | 'PUT' | 'PATCH' | 'DELETE',
      url: string,
      payload?: unknown,
      headers: Record<string, string> = admin,
    ) =>
      t.app.inject({
        method,
        url,
        headers: { ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
      });
    const names = async () =>
      (await call('GET', '/categories?limit=500')).json().items.map((c: { name: string }) => c.name);

    it('declares (201), replaces (200), lists by name with pages, and deletes (204, then 404)', async () => {
      const created = await call('PUT', '/categories/marketing', {
        description: 'Offers and product news',
        defaultChannels: { sms: false },
      });
      assert.equal(created.statusCode, 201, created.body);
      assert.deepEqual(created.json(), {
        name: 'marketing',
        description: 'Offers and product news',
        required: false,
        defaultChannels: { sms: false },
      });
      const replaced = await call('PUT', '/categories/marketing', { required: true });
      assert.equal(replaced.statusCode, 200);
      assert.deepEqual(replaced.json(), {
        name: 'marketing',
        description: null,
        required: true,
        defaultChannels: {},
      });
      assert.equal((await call('PUT', '/categories/billing.invoices', {})).statusCode, 201);
      assert.equal((await call('PUT', '/categories/alerts', {})).statusCode, 201);

      const first = (await call('GET', '/categories?limit=2')).json();
      assert.deepEqual(
        first.items.map((c: { name: string }) => c.name),
        ['alerts', 'billing.invoices'],
      );
      const second = (await call('GET', `/categories?limit=2&cursor=${first.nextCursor}`)).json();
      assert.deepEqual(second, {
        items: [{ name: 'marketing', description: null, required: true, defaultChannels: {} }],
        nextCursor: null,
      });
      assert.equal((await call('GET', '/categories?cursor=forged')).statusCode, 400);

      assert.equal((await call('DELETE', '/categories/alerts')).statusCode, 204);
      const again = await call('DELETE', '/categories/alerts');
      assert.equal(again.statusCode, 404);
      assert.equal(again.json().code, 'NOT_FOUND');
      assert.deepEqual(await names(), ['billing.invoices', 'marketing']);
    });

    it('refuses bad names and bodies with 400 problem+json, and stores nothing', async () => {
      const before = await names();
      const cases: Array<[string, unknown, string]> = [
        ['/categories/my%20category', {}, 'params/name'],
        ['/categories/Marketing', {}, 'params/name'],
        [`/categories/${'a'.repeat(65)}`, {}, 'params/name'],
        ['/categories/channels', {}, 'params/name'],
        ['/categories/promo', { defaultChannels: { fax: true } }, 'body/defaultChannels/fax'],
        ['/categories/promo', { defaultChannels: { email: 'yes' } }, 'body/defaultChannels/email'],
        ['/categories/promo', { required: 'no' }, 'body/required'],
        ['/categories/promo', { required: 1 }, 'body/required'],
        ['/categories/promo', { defaultChannels: { sms: 'false' } }, 'body/defaultChannels/sms'],
        ['/categories/promo', { colour: 'red' }, 'body'],
        ['/categories/promo', { description: 'x'.repeat(501) }, 'body/description'],
        ['/categories/promo', [], 'body'],
      ];
      for (const [url, body, path] of cases) {
        const response = await call('PUT', url, body);
        assert.equal(response.statusCode, 400, `${url} ${JSON.stringify(body)}: ${response.body}`);
        assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
        assert.equal(response.json().code, 'VALIDATION_FAILED');
        assert.ok(
          response.json().errors.some((e: { path: string }) => e.path.startsWith(path)),
          `${url}: ${JSON.stringify(response.json().errors)}`,
        );
      }
      assert.match(
        (await call('PUT', '/categories/channels', {})).json().errors[0].message,
        /must NOT be channels/,
      );
      assert.deepEqual(await names(), before);
    });

    it("keeps tenants apart: another tenant's category is neither listed nor deletable", async () => {
      const other = await authHeader(t.deps, { role: 'admin', tenant: 'other' });
      assert.equal((await call('PUT', '/categories/secret', {}, other)).statusCode, 201);
      assert.ok(!(await names()).includes('secret'));
      assert.equal((await call('DELETE', '/categories/secret')).statusCode, 404);
      const theirs = (await call('GET', '/categories', undefined, other)).json();
      assert.deepEqual(
        theirs.items.map((c: { name: string }) => c.name),
        ['secret'],
      );
    });

    it('needs admin to declare or delete, and recipients:read to list', async () => {
      const reader = await authHeader(t.deps, { scopes: ['recipients:read'] });
      const bare = await authHeader(t.deps, { scopes: ['notifications:read'] });
      assert.equal((await call('GET', '/categories', undefined, reader)).statusCode, 200);
      assert.equal((await call('GET', '/categories', undefined, bare)).statusCode, 403);
      assert.equal((await call('PUT', '/categories/promo', {}, reader)).statusCode, 403);
      assert.equal((await call('DELETE', '/categories/marketing', undefined, reader)).statusCode, 403);
      assert.equal((await call('GET', '/categories', undefined, {})).statusCode, 401);
    });

    describe('preferences', () => {
      const url = '/recipients/user-1842/preferences';
      before(async () => {
        await t.deps.store.recipients.put(
          'default',
          [{ id: 'user-1842', profile: { email: 'ada@example.com' } }],
          1,
        );
      });
      const stored = async () => (await t.deps.store.recipients.get('default', 'user-1842'))?.preferences;
      const patch = (payload: unknown, type = 'application/merge-patch+json', headers = admin) =>
        t.app.inject({
          method: 'PATCH',
          url,
          headers: { ...headers, 'content-type': type },
          payload: JSON.stringify(payload),
        });

      it('starts empty, PUT replaces (a category without choices left out), GET reads', async () => {
        assert.deepEqual((await call('GET', url)).json(), { channels: {}, categories: {} });
        const put = await call('PUT', url, {
          channels: { sms: false },
          categories: { marketing: { email: false, push: true }, digest: {} },
        });
        assert.equal(put.statusCode, 200, put.body);
        const expected = {
          channels: { sms: false },
          categories: { marketing: { email: false, push: true } },
        };
        assert.deepEqual(put.json(), expected);
        assert.deepEqual((await call('GET', url)).json(), expected);
        assert.deepEqual(await stored(), expected);
        // A part left out is emptied.
        assert.deepEqual((await call('PUT', url, { channels: { inapp: true } })).json(), {
          channels: { inapp: true },
          categories: {},
        });
      });

      it('PATCH merges (RFC 7396): a member replaces, null removes, a member left out stays', async () => {
        await call('PUT', url, {
          channels: { sms: false, email: true },
          categories: { marketing: { email: false }, digest: { push: false } },
        });
        const merged = await patch({
          channels: { sms: null, push: false },
          categories: { marketing: { email: null, inapp: true }, digest: null, billing: { sms: true } },
        });
        assert.equal(merged.statusCode, 200, merged.body);
        const expected = {
          channels: { email: true, push: false },
          categories: { marketing: { inapp: true }, billing: { sms: true } },
        };
        assert.deepEqual(merged.json(), expected);
        assert.deepEqual(await stored(), expected);
        // application/json is taken too; null removes a whole part; {} changes nothing.
        assert.deepEqual((await patch({}, 'application/json')).json(), expected);
        assert.deepEqual((await patch({ categories: null }, 'application/json')).json(), {
          channels: expected.channels,
          categories: {},
        });
        // A category whose last choice is removed is left out.
        await patch({ categories: { marketing: { email: false } } });
        assert.deepEqual((await patch({ categories: { marketing: { email: null } } })).json().categories, {});
      });

      it('loses no change of concurrent patches', async () => {
        await call('PUT', url, {});
        const names = Array.from({ length: 20 }, (_, i) => `c${i}`);
        const answers = await Promise.all(
          names.map((name) => patch({ categories: { [name]: { email: false } } })),
        );
        assert.deepEqual(
          answers.map((a) => a.statusCode),
          names.map(() => 200),
        );
        assert.deepEqual(Object.keys((await stored())?.categories ?? {}).sort(), [...names].sort());
      });

      it('refuses a patch that is not an object or holds anything but booleans, and changes nothing', async () => {
        await call('PUT', url, { channels: { sms: false } });
        const before = await stored();
        const bad: unknown[] = [
          [{ channels: {} }],
          'channels',
          null,
          { channels: { email: 'yes' } },
          { channels: { fax: true } },
          { categories: { 'bad name': { email: true } } },
          // Booleans only: nothing that ajv's type coercion would turn into one.
          { categories: { marketing: { email: 1 } } },
          { channels: { email: 'true' } },
          { channels: false },
          { channels: '' },
          { categories: { marketing: 0 } },
          { categories: { marketing: true } },
          { colour: 'red' },
        ];
        for (const body of bad) {
          const response = await patch(body);
          assert.equal(response.statusCode, 400, `${JSON.stringify(body)}: ${response.body}`);
          assert.equal(response.json().code, 'VALIDATION_FAILED');
        }
        assert.equal((await call('PUT', url, { channels: { sms: null } })).statusCode, 400);
        assert.equal((await call('PUT', url, { categories: { Marketing: {} } })).statusCode, 400);
        const text = await t.app.inject({
          method: 'PATCH',
          url,
          headers: { ...admin, 'content-type': 'text/plain' },
          payload: '{}',
        });
        assert.equal(text.statusCode, 415);
        assert.deepEqual(await stored(), before);
      });

      it('answers 404 for an unknown recipient or another tenant’s, and 400 for a malformed ID', async () => {
        for (const [method, body] of [
          ['GET', undefined],
          ['PUT', {}],
          ['PATCH', {}],
        ] as const) {
          const unknown = await call(method, '/recipients/nobody/preferences', body);
          assert.equal(unknown.statusCode, 404, `${method}: ${unknown.body}`);
          assert.equal(unknown.json().code, 'NOT_FOUND');
        }
        const other = await authHeader(t.deps, { role: 'admin', tenant: 'other' });
        assert.equal((await call('GET', url, undefined, other)).statusCode, 404);
        assert.equal((await patch({ channels: { email: false } }, undefined, other)).statusCode, 404);
        assert.equal((await call('GET', '/recipients/a%20b/preferences')).statusCode, 400);
      });

      it('needs recipients:read to read and recipients:write to change', async () => {
        const reader = await authHeader(t.deps, { scopes: ['recipients:read'] });
        const writer = await authHeader(t.deps, { scopes: ['recipients:write'] });
        assert.equal((await call('GET', url, undefined, reader)).statusCode, 200);
        assert.equal((await call('PUT', url, {}, reader)).statusCode, 403);
        assert.equal((await patch({}, undefined, reader)).statusCode, 403);
        assert.equal((await call('GET', url, undefined, writer)).statusCode, 403);
        assert.equal((await call('PUT', url, {}, writer)).statusCode, 200);
        assert.equal((await patch({}, undefined, writer)).statusCode, 200);
      });
    });
  });
}
