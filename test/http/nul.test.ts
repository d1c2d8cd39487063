// U+0000 anywhere in a request (API.md §3, and the smaller findings of the auth review): 400
// VALIDATION_FAILED naming the field, never a 500, on SQLite and on PostgreSQL (whose text
// cannot hold the character, so it used to fail inside the statement).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { authHeader, authTestApp } from '../helpers/auth.ts';
import { type PostgresServer, sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`U+0000 in a request (${kind})`, () => {
    let server: PostgresServer | undefined;
    let t: Awaited<ReturnType<typeof authTestApp>> | undefined;
    after(async () => {
      await t?.close();
      if (server) await stopSharedPostgres();
    });

    it('answers 400 naming the field, in a body, a path parameter or a query value', async () => {
      if (kind === 'postgres') server = await sharedPostgres();
      const env: Record<string, string> = server
        ? { DATABASE_URL: await server.createDatabase('herald_nul') }
        : {};
      const app = await authTestApp(env);
      t = app;
      const admin = await authHeader(app.deps, { role: 'admin' });
      const cases: Array<{
        method: 'GET' | 'POST';
        url: string;
        payload?: object;
        headers?: Record<string, string>;
      }> = [
        { method: 'POST', url: '/auth/login', payload: { email: 'ada\u0000@example.com', password: 'x' } },
        { method: 'POST', url: '/auth/refresh', payload: { refresh_token: 'a\u0000b' } },
        {
          method: 'POST',
          url: '/admin/users',
          payload: { email: 'bo\u0000b@example.com', password: 'a long enough password', role: 'viewer' },
          headers: admin,
        },
        { method: 'GET', url: '/notifications/abc%00def', headers: admin },
        { method: 'GET', url: '/notifications?status=SENT%00', headers: admin },
      ];
      const paths: string[] = [];
      for (const c of cases) {
        const response = await app.app.inject(c);
        assert.equal(response.statusCode, 400, `${c.method} ${c.url}: ${response.body}`);
        assert.equal(response.json().code, 'VALIDATION_FAILED');
        paths.push(response.json().errors[0].path);
      }
      assert.deepEqual(paths, [
        'body/email',
        'body/refresh_token',
        'body/email',
        'params/id',
        'query/status',
      ]);
      assert.equal((await app.deps.store.auth.listUsers()).length, 0, 'nothing was created');
    });
  });
}
