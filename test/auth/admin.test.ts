import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { authHeader, authTestApp, loginAs } from '../helpers/auth.ts';

describe('/admin/users and /admin/clients', () => {
  let t: Awaited<ReturnType<typeof authTestApp>>;
  let root: { authorization: string };
  before(async () => {
    t = await authTestApp({
      HERALD_ADMIN_EMAIL: 'root@example.com',
      HERALD_ADMIN_PASSWORD: 'bootstrap-pass-1',
    });
    root = {
      authorization: `Bearer ${(await loginAs(t.app, 'root@example.com', 'bootstrap-pass-1')).access_token}`,
    };
  });
  after(() => t.close());

  const post = (url: string, payload: Record<string, unknown>, headers: Record<string, string>) =>
    t.app.inject({ method: 'POST', url, payload, headers });
  const get = (url: string, headers: Record<string, string>) => t.app.inject({ method: 'GET', url, headers });

  it('bootstraps the admin from HERALD_ADMIN_EMAIL in tenant default', async () => {
    const me = (await get('/auth/me', root)).json();
    assert.equal(me.role, 'admin');
    assert.equal(me.tid, 'default');
    assert.equal(me.email, 'root@example.com');
  });

  it('bootstraps only when no user has that email: a restart with another password changes nothing', async () => {
    const { bootstrapAdmin } = await import('../../src/auth/accounts.ts');
    assert.equal(
      await bootstrapAdmin(t.deps.store.auth, t.clock, 'ROOT@example.com', 'another-password'),
      false,
    );
    assert.ok(await loginAs(t.app, 'root@example.com', 'bootstrap-pass-1'));
  });

  it('creates a user in the caller tenant by default, who can then log in', async () => {
    const response = await post(
      '/admin/users',
      { email: 'Sam@Example.com', password: 'sam-password', role: 'sender' },
      root,
    );
    assert.equal(response.statusCode, 201);
    const body = response.json();
    assert.equal(body.email, 'sam@example.com');
    assert.equal(body.tenant, 'default');
    assert.equal(body.role, 'sender');
    assert.equal('password' in body || 'passwordHash' in body, false);
    assert.ok(await loginAs(t.app, 'sam@example.com', 'sam-password'));
    const again = await post(
      '/admin/users',
      { email: 'sam@example.com', password: 'sam-password', role: 'viewer' },
      root,
    );
    assert.equal(again.statusCode, 409);
  });

  it('lets default admins create users in any tenant; other admins only in their own', async () => {
    const made = await post(
      '/admin/users',
      { email: 'boss@acme.test', password: 'acme-password', role: 'admin', tenant: 'acme' },
      root,
    );
    assert.equal(made.statusCode, 201);
    assert.equal(made.json().tenant, 'acme');
    const acme = {
      authorization: `Bearer ${(await loginAs(t.app, 'boss@acme.test', 'acme-password')).access_token}`,
    };
    const own = await post(
      '/admin/users',
      { email: 'dev@acme.test', password: 'dev-password', role: 'viewer' },
      acme,
    );
    assert.equal(own.statusCode, 201);
    assert.equal(own.json().tenant, 'acme');
    const foreign = await post(
      '/admin/users',
      { email: 'x@other.test', password: 'x-password-long', role: 'viewer', tenant: 'other' },
      acme,
    );
    assert.equal(foreign.statusCode, 403);
    assert.equal(foreign.json().code, 'FORBIDDEN');
    const clientElsewhere = await post(
      '/admin/clients',
      { name: 'c', scopes: ['admin'], tenant: 'default' },
      acme,
    );
    assert.equal(clientElsewhere.statusCode, 403);
    // Listing shows only acme's users to acme's admin.
    const listed = (await get('/admin/users', acme)).json().items.map((u: { email: string }) => u.email);
    assert.deepEqual(listed.sort(), ['boss@acme.test', 'dev@acme.test']);
    assert.equal((await get('/admin/users?tenant=default', acme)).statusCode, 403);
    const all = (await get('/admin/users', root)).json().items;
    assert.ok(all.length >= 4);
  });

  it('refuses bad bodies with 400 and unknown fields', async () => {
    for (const payload of [
      { email: 'a@b.c', password: 'short', role: 'admin' },
      { email: 'a@b.c', password: 'long-enough-pw', role: 'root' },
      { email: 'a@b.c', password: 'long-enough-pw', role: 'admin', extra: 1 },
      { email: 'a@b.c', password: 'long-enough-pw', role: 'admin', tenant: 'Bad Tenant' },
    ]) {
      const response = await post('/admin/users', payload, root);
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      assert.equal(response.json().code, 'VALIDATION_FAILED');
    }
  });

  it('disables a user, who can then neither log in nor be seen by other tenants', async () => {
    const made = (
      await post(
        '/admin/users',
        { email: 'temp@example.com', password: 'temp-password', role: 'viewer' },
        root,
      )
    ).json();
    const acmeAdmin = await authHeader(t.deps, { tenant: 'acme', scopes: ['admin'] });
    assert.equal((await post(`/admin/users/${made.id}/disable`, {}, acmeAdmin)).statusCode, 404);
    const disabled = await post(`/admin/users/${made.id}/disable`, {}, root);
    assert.equal(disabled.statusCode, 200);
    assert.equal(disabled.json().disabled, true);
    const login = await t.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'temp@example.com', password: 'temp-password' },
    });
    assert.equal(login.statusCode, 401);
    assert.equal((await post('/admin/users/usr_nope/disable', {}, root)).statusCode, 404);
  });

  it('creates a client whose secret is shown once and works at /auth/token', async () => {
    const response = await post(
      '/admin/clients',
      { name: 'prometheus', scopes: ['admin'], tenant: 'ops' },
      root,
    );
    assert.equal(response.statusCode, 201);
    const body = response.json();
    assert.deepEqual(Object.keys(body).sort(), [
      'client_id',
      'client_secret',
      'createdAt',
      'disabled',
      'name',
      'scopes',
      'tenant',
    ]);
    assert.equal(body.tenant, 'ops');
    const listed = (await get('/admin/clients?tenant=ops', root)).json().items;
    assert.equal(listed.length, 1);
    assert.equal(listed[0].client_id, body.client_id);
    assert.equal('client_secret' in listed[0], false);
    const token = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      payload: {
        grant_type: 'client_credentials',
        client_id: body.client_id,
        client_secret: body.client_secret,
      },
    });
    assert.equal(token.statusCode, 200);
    assert.equal(token.json().scope, 'admin');
  });

  it('needs the admin scope', async () => {
    const sender = await authHeader(t.deps, { scopes: ['notifications:send'] });
    assert.equal((await get('/admin/users', sender)).statusCode, 403);
    assert.equal((await post('/admin/clients', { name: 'x', scopes: ['admin'] }, sender)).statusCode, 403);
  });
});
