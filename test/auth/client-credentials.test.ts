import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { createClient } from '../../src/auth/accounts.ts';
import { localTurn } from '../../src/auth/argon2-gate.ts';
import { argon2Stats, hashSecret } from '../../src/auth/passwords.ts';
import { authTestApp } from '../helpers/auth.ts';

describe('POST /auth/token (client credentials)', () => {
  let t: Awaited<ReturnType<typeof authTestApp>>;
  let id: string;
  let secret: string;
  before(async () => {
    t = await authTestApp();
    const made = await createClient(t.deps.store.auth, t.deps.clock, t.deps.auth.clientSecrets, {
      name: 'billing',
      scopes: ['notifications:send', 'notifications:read'],
      tenant: 'acme',
    });
    id = made.client.id;
    secret = made.secret;
  });
  after(() => t.close());

  const form = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/auth/token',
      payload: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    });
  const basic = (user: string, pass: string) => ({
    authorization: `Basic ${Buffer.from(`${encodeURIComponent(user)}:${encodeURIComponent(pass)}`).toString('base64')}`,
  });

  it('issues an access token and no refresh token, with HTTP Basic and a form body', async () => {
    const response = await form({ grant_type: 'client_credentials' }, basic(id, secret));
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['cache-control'], 'no-store');
    const body = response.json();
    assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
    assert.equal(body.scope, 'notifications:send notifications:read');
    const claims = decodeJwt(body.access_token);
    assert.equal(claims.tid, 'acme');
    assert.equal(claims.sub, id);
    const me = await t.app.inject({
      method: 'GET',
      url: '/auth/me',
      headers: { authorization: `Bearer ${body.access_token}` },
    });
    assert.equal(me.json().kind, 'client');
  });

  it('accepts the credentials in a form body and in a JSON body', async () => {
    const viaForm = await form({ grant_type: 'client_credentials', client_id: id, client_secret: secret });
    assert.equal(viaForm.statusCode, 200);
    const viaJson = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      payload: { grant_type: 'client_credentials', client_id: id, client_secret: secret },
    });
    assert.equal(viaJson.statusCode, 200);
  });

  it('narrows the token to requested scopes it holds and refuses others', async () => {
    const narrow = await form(
      { grant_type: 'client_credentials', scope: 'notifications:read' },
      basic(id, secret),
    );
    assert.equal(narrow.json().scope, 'notifications:read');
    const wide = await form({ grant_type: 'client_credentials', scope: 'admin' }, basic(id, secret));
    assert.equal(wide.statusCode, 400);
    assert.equal(wide.json().error, 'invalid_scope');
  });

  it('answers a bad secret or unknown client with 401 invalid_client in OAuth form', async () => {
    for (const response of [
      await form({ grant_type: 'client_credentials' }, basic(id, 'wrong')),
      await form({ grant_type: 'client_credentials' }, basic('cli_unknown', secret)),
      await form({ grant_type: 'client_credentials', client_id: id, client_secret: 'wrong' }),
      await form({ grant_type: 'client_credentials' }),
    ]) {
      assert.equal(response.statusCode, 401);
      assert.match(String(response.headers['content-type']), /^application\/json/);
      const body = response.json();
      assert.equal(body.error, 'invalid_client');
      assert.equal(typeof body.error_description, 'string');
    }
  });

  it('answers other mistakes in OAuth form too', async () => {
    const grant = await form({ grant_type: 'password' }, basic(id, secret));
    assert.equal(grant.statusCode, 400);
    assert.equal(grant.json().error, 'unsupported_grant_type');
    const repeated = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      payload: 'grant_type=client_credentials&grant_type=client_credentials',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...basic(id, secret) },
    });
    assert.equal(repeated.json().error, 'invalid_request');
    const broken = await t.app.inject({
      method: 'POST',
      url: '/auth/token',
      payload: '{"grant_type": ',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(broken.statusCode, 400);
    assert.equal(broken.json().error, 'invalid_request');
  });

  it('answers a U+0000 in the body with 400 invalid_request, not 500', async () => {
    const json = (payload: string) =>
      t.app.inject({
        method: 'POST',
        url: '/auth/token',
        payload,
        headers: { 'content-type': 'application/json' },
      });
    for (const response of [
      await json('"\\u0000"'),
      await json(
        JSON.stringify({ grant_type: 'client_credentials', client_id: 'a\u0000b', client_secret: 'x' }),
      ),
      await form({ grant_type: 'client_credentials', client_id: id, client_secret: 'a\u0000b' }),
    ]) {
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(response.json().error, 'invalid_request');
      assert.match(response.json().error_description, /U\+0000/);
    }
  });

  it('keeps form bodies to this endpoint only', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: 'email=a%40b.c&password=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(response.statusCode, 415);
    assert.equal(response.json().code, 'UNSUPPORTED_MEDIA_TYPE');
  });
  it('stores a keyed digest, not an argon2 hash, and checks a bad secret or an unknown client without argon2', async () => {
    const stored = await t.deps.store.auth.findClient(id);
    assert.match(stored?.secretHash ?? '', /^hmac-sha256:[\w-]{43}$/);
    const before = argon2Stats().started;
    for (let i = 0; i < 5; i++) {
      assert.equal(
        (await form({ grant_type: 'client_credentials' }, basic(id, `wrong${i}`))).statusCode,
        401,
      );
    }
    assert.equal(
      (await form({ grant_type: 'client_credentials' }, basic('cli_nobody', secret))).statusCode,
      401,
    );
    assert.equal((await form({ grant_type: 'client_credentials' }, basic(id, secret))).statusCode, 200);
    assert.equal(argon2Stats().started, before, 'no argon2 hash or verification ran');
  });

  it('checks a secret stored with argon2 before once more, then replaces it with the digest', async () => {
    const legacy = `legacy-secret-${'x'.repeat(32)}`;
    await t.deps.store.auth.createClient({
      id: 'cli_legacy',
      name: 'legacy',
      secretHash: await hashSecret(legacy, localTurn('default')),
      scopes: ['notifications:send'],
      tenant: 'acme',
      disabled: false,
      createdAt: t.clock.now(),
    });
    assert.equal(
      (await form({ grant_type: 'client_credentials' }, basic('cli_legacy', 'wrong'))).statusCode,
      401,
    );
    assert.match((await t.deps.store.auth.findClient('cli_legacy'))?.secretHash ?? '', /^\$argon2id\$/);
    assert.equal(
      (await form({ grant_type: 'client_credentials' }, basic('cli_legacy', legacy))).statusCode,
      200,
    );
    assert.match((await t.deps.store.auth.findClient('cli_legacy'))?.secretHash ?? '', /^hmac-sha256:/);
    const before = argon2Stats().started;
    assert.equal(
      (await form({ grant_type: 'client_credentials' }, basic('cli_legacy', legacy))).statusCode,
      200,
    );
    assert.equal(argon2Stats().started, before);
  });

  it('keeps the digest key sealed when HERALD_KEY_ENCRYPTION_SECRET is set', async () => {
    const sealed = await authTestApp({
      HERALD_KEY_ENCRYPTION_SECRET: 'a long key encryption secret for tests',
    });
    try {
      const made = await createClient(
        sealed.deps.store.auth,
        sealed.deps.clock,
        sealed.deps.auth.clientSecrets,
        {
          name: 'sealed',
          scopes: ['notifications:send'],
          tenant: 'acme',
        },
      );
      const key = await sealed.deps.store.auth.serverSecret('client-secret-mac', 'unused', 0);
      assert.match(key, /^enc:v1:/);
      const answer = await sealed.app.inject({
        method: 'POST',
        url: '/auth/token',
        payload: { grant_type: 'client_credentials', client_id: made.client.id, client_secret: made.secret },
      });
      assert.equal(answer.statusCode, 200);
    } finally {
      await sealed.close();
    }
  });
});
