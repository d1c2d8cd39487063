import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { App } from '../../src/http/types.ts';
import type { HeraldDeps } from '../../src/main.ts';
import { buildApi, createDeps, type Herald, startHerald } from '../../src/main.ts';
import { createUser, loginAs, tokenFor } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';

describe('an api process without the auth role verifies with HERALD_JWKS_URL', () => {
  let auth: Herald;
  let api: App;
  let apiDeps: HeraldDeps;

  before(async () => {
    auth = await startHerald(testConfig({ HERALD_ROLES: 'auth', HERALD_KEY_RELOAD_MS: '200' }));
    // Its own data directory: the keys can only come from the auth process over HTTP.
    apiDeps = await createDeps(
      testConfig({
        HERALD_ROLES: 'api',
        HERALD_JWKS_URL: `${auth.apiUrl}/.well-known/jwks.json`,
        HERALD_JWKS_MAX_AGE_MS: '1000',
      }),
    );
    api = await buildApi(apiDeps);
  });
  after(async () => {
    await api.close();
    await apiDeps.store.close();
    await auth.close();
  });

  const listUsers = (token: string) =>
    api.inject({ method: 'GET', url: '/admin/users', headers: { authorization: `Bearer ${token}` } });

  it('accepts tokens the auth process issued at login and checks their scope', async () => {
    await createUser(auth.deps, { email: 'remote@example.com', role: 'viewer' });
    const { access_token: viewer } = await loginAs(auth.api as App, 'remote@example.com');
    assert.equal((await listUsers(viewer)).statusCode, 403);
    const admin = await tokenFor(auth.deps, { scopes: ['admin'] });
    assert.equal((await listUsers(admin)).statusCode, 200);
  });

  it('does not make keys of its own', async () => {
    assert.deepEqual(await apiDeps.store.auth.listSigningKeys(), []);
  });

  it('refuses tokens signed by a key the JWKS does not publish', async () => {
    const attacker = await generateKeyPair('ES256', { extractable: true });
    const now = Math.floor(Date.now() / 1000);
    const forged = await new SignJWT({ scope: 'admin', tid: 'default' })
      .setProtectedHeader({
        alg: 'ES256',
        typ: 'at+jwt',
        kid: 'attacker',
        jwk: await exportJWK(attacker.publicKey),
      })
      .setIssuer(apiDeps.config.auth.issuer)
      .setAudience(apiDeps.config.auth.audience)
      .setSubject('usr_x')
      .setJti('j')
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .sign(attacker.privateKey);
    const response = await listUsers(forged);
    assert.equal(response.statusCode, 401);
    assert.equal(response.json().code, 'AUTH_INVALID_TOKEN');
  });

  it("refuses a token signed with the auth process's real key whose lifetime passes HERALD_ACCESS_TTL", async () => {
    await tokenFor(auth.deps, { scopes: ['admin'] });
    const { key, alg, kid } = await auth.deps.auth.keyring.signingKey();
    const now = Math.floor(Date.now() / 1000);
    const signed = (exp: number) =>
      new SignJWT({ scope: 'admin', tid: 'default' })
        .setProtectedHeader({ alg, typ: 'at+jwt', kid })
        .setIssuer(apiDeps.config.auth.issuer)
        .setAudience(apiDeps.config.auth.audience)
        .setSubject('usr_x')
        .setJti(`j${exp}`)
        .setIssuedAt(now)
        .setExpirationTime(exp)
        .sign(key);
    const year3000 = await listUsers(await signed(Date.UTC(3000, 0, 1) / 1000));
    assert.equal(year3000.statusCode, 401);
    assert.equal(year3000.json().code, 'AUTH_INVALID_TOKEN');
    const longest = now + apiDeps.config.auth.accessTtl + 30;
    assert.equal((await listUsers(await signed(longest))).statusCode, 200);
  });

  it('refuses tokens of a removed key once the key set is fetched again, cached ones included', async () => {
    const admin = await tokenFor(auth.deps, { scopes: ['admin'] });
    assert.equal((await listUsers(admin)).statusCode, 200);
    const kid = decodeProtectedHeader(admin).kid as string;
    await auth.deps.auth.keyring.rotate();
    assert.ok(await auth.deps.store.auth.deleteSigningKey(kid));
    // Within HERALD_JWKS_MAX_AGE_MS (1 s here; 30 s by default) and one background fetch.
    await eventually(
      async () => (await listUsers(admin)).statusCode === 401,
      10_000,
      'the removed key refused',
    );
    assert.equal((await listUsers(await tokenFor(auth.deps, { scopes: ['admin'] }))).statusCode, 200);
  });
});
