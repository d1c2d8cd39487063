// #46.3: a user is a tenant and an email (API.md section 2). The same email may be a user of
// several tenants, each with its own password and role; a login names the tenant or is the one
// user whose password matches; no answer tells one tenant whether an email is a user elsewhere.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { bootstrapAdmin } from '../../src/auth/accounts.ts';
import { LOGIN_CANDIDATES } from '../../src/auth/password-login.ts';
import { argon2Stats } from '../../src/auth/passwords.ts';
import { authHeader, authTestApp, createUser } from '../helpers/auth.ts';

const ACME = 'the acme password';
const GLOBEX = 'the globex password';

describe('users per tenant: the same email in several tenants', () => {
  let t: Awaited<ReturnType<typeof authTestApp>>;
  before(async () => {
    t = await authTestApp();
    await createUser(t.deps, { email: 'cfo@globex.test', password: ACME, role: 'admin', tenant: 'acme' });
    await createUser(t.deps, {
      email: 'cfo@globex.test',
      password: GLOBEX,
      role: 'viewer',
      tenant: 'globex',
    });
  });
  after(() => t.close());

  const login = (payload: Record<string, string>) =>
    t.app.inject({ method: 'POST', url: '/auth/login', payload });
  const tenantOf = async (payload: Record<string, string>) => {
    const response = await login(payload);
    assert.equal(response.statusCode, 200, response.body);
    return decodeJwt(response.json().access_token).tid;
  };

  it('signs in, without a tenant, the one user whose password matches', async () => {
    assert.equal(await tenantOf({ email: 'cfo@globex.test', password: ACME }), 'acme');
    assert.equal(await tenantOf({ email: 'CFO@globex.test', password: GLOBEX }), 'globex');
  });

  it('signs in, with a tenant, only that tenant’s user', async () => {
    assert.equal(await tenantOf({ email: 'cfo@globex.test', password: GLOBEX, tenant: 'globex' }), 'globex');
    assert.equal(await tenantOf({ email: 'cfo@globex.test', password: ACME, tenant: 'acme' }), 'acme');
    // The acme password does not open the globex user, nor an unknown tenant's: the same 401.
    const crossed = await login({ email: 'cfo@globex.test', password: ACME, tenant: 'globex' });
    const unknown = await login({ email: 'cfo@globex.test', password: ACME, tenant: 'initech' });
    const wrong = await login({ email: 'nobody@globex.test', password: ACME });
    for (const response of [crossed, unknown]) {
      assert.equal(response.statusCode, 401);
      assert.equal(response.body, wrong.body);
    }
    assert.equal(
      (await login({ email: 'cfo@globex.test', password: ACME, tenant: 'Not A Tenant' })).statusCode,
      400,
    );
  });

  it('asks for the tenant (400) when the password matches users of several tenants', async () => {
    await createUser(t.deps, { email: 'twice@example.com', password: ACME, tenant: 'acme' });
    await createUser(t.deps, { email: 'twice@example.com', password: ACME, tenant: 'globex' });
    const ambiguous = await login({ email: 'twice@example.com', password: ACME });
    assert.equal(ambiguous.statusCode, 400);
    const problem = ambiguous.json();
    assert.equal(problem.code, 'VALIDATION_FAILED');
    assert.deepEqual(
      problem.errors.map((e: { path: string }) => e.path),
      ['body/tenant'],
    );
    assert.equal(await tenantOf({ email: 'twice@example.com', password: ACME, tenant: 'globex' }), 'globex');
    // A disabled user is no candidate to sign in: the other one is the login.
    const acme = await t.deps.store.auth.findUserByEmail('twice@example.com', 'acme');
    await t.deps.store.auth.setUserDisabled(acme?.id as string, true);
    assert.equal(await tenantOf({ email: 'twice@example.com', password: ACME }), 'globex');
  });

  it(`checks at most ${LOGIN_CANDIDATES} users of one email without a tenant; the others sign in naming theirs`, async () => {
    for (let i = 0; i <= LOGIN_CANDIDATES; i++) {
      await createUser(t.deps, {
        email: 'many@example.com',
        password: `password number ${i}`,
        tenant: `t${i}`,
      });
      t.clock.advance(1);
    }
    const last = `password number ${LOGIN_CANDIDATES}`;
    assert.equal((await login({ email: 'many@example.com', password: last })).statusCode, 401);
    assert.equal(
      await tenantOf({ email: 'many@example.com', password: last, tenant: `t${LOGIN_CANDIDATES}` }),
      `t${LOGIN_CANDIDATES}`,
    );
    assert.equal(await tenantOf({ email: 'many@example.com', password: 'password number 0' }), 't0');
  });

  it('costs the same argon2 work whatever number of tenants have a user of the email', async () => {
    const verifications = async (payload: Record<string, string>) => {
      const before = argon2Stats().started;
      assert.equal((await login(payload)).statusCode, 401);
      return argon2Stats().started - before;
    };
    const wrong = 'not any of the passwords';
    // Without a tenant: no user, one user (acme's admin's own), two, more than the cap.
    for (const email of [
      'nobody@example.com',
      'admin-only@example.com',
      'cfo@globex.test',
      'many@example.com',
    ]) {
      assert.equal(await verifications({ email, password: wrong }), LOGIN_CANDIDATES, email);
    }
    // Naming a tenant: one, whether that tenant has the user or not.
    assert.equal(await verifications({ email: 'cfo@globex.test', password: wrong, tenant: 'acme' }), 1);
    assert.equal(await verifications({ email: 'cfo@globex.test', password: wrong, tenant: 'initech' }), 1);
  });

  it('counts failed logins per email, whatever tenant each one names', async () => {
    await createUser(t.deps, { email: 'locked@example.com', password: GLOBEX, tenant: 'globex' });
    for (let i = 0; i < 10; i++) {
      const tenant = i % 2 === 0 ? 'acme' : 'initech';
      assert.equal(
        (await login({ email: 'locked@example.com', password: 'wrong password', tenant })).statusCode,
        401,
      );
    }
    const limited = await login({ email: 'locked@example.com', password: GLOBEX, tenant: 'globex' });
    assert.equal(limited.statusCode, 429);
  });
});

describe('POST /admin/users per tenant', () => {
  let t: Awaited<ReturnType<typeof authTestApp>>;
  let acmeAdmin: { authorization: string };
  let root: { authorization: string };
  before(async () => {
    t = await authTestApp();
    const admin = await createUser(t.deps, { email: 'admin@acme.test', tenant: 'acme' });
    acmeAdmin = await authHeader(t.deps, { tenant: 'acme', sub: admin.id });
    root = await authHeader(t.deps);
  });
  after(() => t.close());

  const create = (headers: { authorization: string }, payload: Record<string, string>) =>
    t.app.inject({ method: 'POST', url: '/admin/users', payload, headers });

  it('answers 201 for an email that is a user of another tenant, 409 only within one tenant', async () => {
    const cfo = {
      email: 'cfo@globex.test',
      password: 'the real cfo password',
      role: 'admin',
      tenant: 'globex',
    };
    assert.equal((await create(root, cfo)).statusCode, 201);
    // Acme's admin cannot tell that globex has this user, nor take the address from it.
    const squatter = { email: cfo.email, password: 'the attacker password', role: 'admin' };
    const squat = await create(acmeAdmin, squatter);
    assert.equal(squat.statusCode, 201);
    assert.equal(squat.json().tenant, 'acme');
    assert.equal((await create(acmeAdmin, squatter)).statusCode, 409);
    assert.equal((await create(root, cfo)).statusCode, 409);
    // The attacker's password opens only the acme user.
    const attacker = await t.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'cfo@globex.test', password: 'the attacker password', tenant: 'globex' },
    });
    assert.equal(attacker.statusCode, 401);
  });

  it('finds a duplicate before hashing: re-posting an existing user runs no argon2', async () => {
    const user = { email: 'again@acme.test', password: 'a long enough password', role: 'viewer' };
    assert.equal((await create(acmeAdmin, user)).statusCode, 201);
    const before = argon2Stats().started;
    for (let i = 0; i < 5; i++) assert.equal((await create(acmeAdmin, user)).statusCode, 409);
    assert.equal(argon2Stats().started, before, 'no argon2 hash ran for a duplicate');
  });

  it('bootstraps the admin in tenant default even when another tenant has a user of that email', async () => {
    await createUser(t.deps, { email: 'boot@example.com', tenant: 'acme' });
    assert.equal(
      await bootstrapAdmin(t.deps.store.auth, t.clock, 'boot@example.com', 'bootstrap-password'),
      true,
    );
    assert.equal((await t.deps.store.auth.findUserByEmail('boot@example.com', 'default'))?.role, 'admin');
    assert.equal(
      await bootstrapAdmin(t.deps.store.auth, t.clock, 'boot@example.com', 'bootstrap-password'),
      false,
    );
  });
});

describe('HERALD_OIDC_TENANT', () => {
  const oidc = { HERALD_OIDC_ISSUER: 'https://idp.example.com', HERALD_OIDC_CLIENT_ID: 'herald' };

  it('defaults to tenant default and must be a tenant name', async () => {
    const { loadConfig } = await import('../../src/config/config.ts');
    assert.equal(loadConfig(oidc).auth.oidc?.tenant, 'default');
    assert.equal(loadConfig({ ...oidc, HERALD_OIDC_TENANT: 'globex' }).auth.oidc?.tenant, 'globex');
    assert.throws(() => loadConfig({ ...oidc, HERALD_OIDC_TENANT: 'Not A Tenant' }), /HERALD_OIDC_TENANT/);
  });
});
