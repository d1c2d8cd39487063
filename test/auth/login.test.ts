import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { authTestApp, createUser } from '../helpers/auth.ts';

const PASSWORD = 'correct horse battery staple';

describe('POST /auth/login', () => {
  let t: Awaited<ReturnType<typeof authTestApp>>;
  before(async () => {
    t = await authTestApp();
    await createUser(t.deps, { email: 'ada@example.com', role: 'sender', tenant: 'acme' });
    const off = await createUser(t.deps, { email: 'off@example.com', role: 'sender' });
    await t.deps.store.auth.setUserDisabled(off.id, true);
  });
  after(() => t.close());

  const login = (email: string, password: string) =>
    t.app.inject({ method: 'POST', url: '/auth/login', payload: { email, password } });

  it('answers a token pair with no-store caching', async () => {
    const response = await login('ada@example.com', PASSWORD);
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['cache-control'], 'no-store');
    const body = response.json();
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 600);
    assert.equal(body.refresh_expires_in, 43200);
    const header = decodeProtectedHeader(body.access_token);
    assert.equal(header.alg, 'ES256');
    assert.equal(header.typ, 'at+jwt');
    assert.ok(header.kid);
    const claims = decodeJwt(body.access_token);
    assert.equal(claims.tid, 'acme');
    assert.equal(claims.scope, 'notifications:send notifications:read templates:read');
    for (const claim of ['iss', 'sub', 'aud', 'exp', 'iat', 'jti']) assert.ok(claims[claim], claim);
    assert.notEqual(decodeProtectedHeader(body.refresh_token).typ, 'at+jwt');
    assert.notEqual(decodeJwt(body.refresh_token).aud, claims.aud);
  });

  it('matches emails case-insensitively', async () => {
    assert.equal((await login('ADA@Example.com', PASSWORD)).statusCode, 200);
  });

  it('answers a wrong email and a wrong password with the same status, body and headers', async () => {
    const wrongEmail = await login('nobody@example.com', PASSWORD);
    const wrongPassword = await login('ada@example.com', 'not the password');
    const disabled = await login('off@example.com', PASSWORD);
    assert.equal(wrongEmail.statusCode, 401);
    const strip = (headers: Record<string, unknown>) => {
      const { 'x-request-id': _id, date: _date, ...rest } = headers;
      return rest;
    };
    for (const other of [wrongPassword, disabled]) {
      assert.equal(other.statusCode, wrongEmail.statusCode);
      assert.equal(other.body, wrongEmail.body);
      assert.deepEqual(strip(other.headers), strip(wrongEmail.headers));
    }
    assert.equal(wrongEmail.json().code, 'AUTH_INVALID_CREDENTIALS');
  });

  it('refuses an over-long password before hashing it', async () => {
    const response = await login('ada@example.com', 'x'.repeat(100_000 / 2));
    assert.equal(response.statusCode, 400);
  });

  it('lets the token call GET /auth/me, with a lowercase bearer scheme too', async () => {
    const { access_token: token } = (await login('ada@example.com', PASSWORD)).json();
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const me = await t.app.inject({
        method: 'GET',
        url: '/auth/me',
        headers: { authorization: `${scheme} ${token}` },
      });
      assert.equal(me.statusCode, 200, scheme);
      const body = me.json();
      assert.equal(body.email, 'ada@example.com');
      assert.equal(body.role, 'sender');
      assert.equal(body.tid, 'acme');
      assert.equal(body.kind, 'user');
      assert.match(body.scope, /notifications:send/);
    }
  });

  it('answers 403 for a valid token without the needed scope', async () => {
    const { access_token: token } = (await login('ada@example.com', PASSWORD)).json();
    const response = await t.app.inject({
      method: 'GET',
      url: '/admin/users',
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(response.statusCode, 403);
    assert.equal(response.json().code, 'FORBIDDEN');
  });
});
