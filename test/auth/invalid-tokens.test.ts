import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { decodeProtectedHeader, exportJWK, exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { authTestApp, createUser, tokenFor } from '../helpers/auth.ts';

const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

describe('protected routes refuse every bad token with the same 401', () => {
  let t: Awaited<ReturnType<typeof authTestApp>>;
  let good: string;
  let kid: string;
  let listener: Server;
  let listenerUrl: string;
  let listenerHits = 0;
  let claims: Record<string, unknown>;
  let nowS: number;

  /** Signs with the server's real active key, so only the named defect is wrong. */
  async function signReal(header: Record<string, unknown>, payload: Record<string, unknown>) {
    const { key, alg } = await t.deps.auth.keyring.signingKey();
    return new SignJWT(payload).setProtectedHeader({ alg, kid, typ: 'at+jwt', ...header }).sign(key);
  }

  before(async () => {
    t = await authTestApp();
    good = await tokenFor(t.deps, { scopes: ['admin'] });
    kid = decodeProtectedHeader(good).kid as string;
    nowS = Math.floor(t.clock.now() / 1000);
    claims = {
      iss: t.deps.config.auth.issuer,
      aud: t.deps.config.auth.audience,
      sub: 'usr_x',
      tid: 'default',
      scope: 'admin',
      jti: 'j1',
      iat: nowS,
      exp: nowS + 600,
    };
    listener = createServer((_request, response) => {
      listenerHits += 1;
      response.end('{}');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    listenerUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/jwks.json`;
  });
  after(async () => {
    await t.close();
    await new Promise((resolve) => listener.close(resolve));
  });

  async function expect401(
    authorization: string | undefined,
    url = '/auth/me',
    extra: Record<string, string> = {},
  ) {
    const headers: Record<string, string> = { ...extra };
    if (authorization !== undefined) headers.authorization = authorization;
    const response = await t.app.inject({ method: 'GET', url, headers });
    assert.equal(response.statusCode, 401, `${authorization?.slice(0, 60)} -> ${response.body}`);
    assert.match(String(response.headers['www-authenticate']), /^Bearer/);
    const body = response.json();
    assert.equal(body.code, 'AUTH_INVALID_TOKEN');
    return response;
  }

  it('accepts the well-formed token the cases below are derived from', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/auth/me',
      headers: { authorization: `Bearer ${good}` },
    });
    assert.equal(response.statusCode, 200);
  });

  it('gives every refusal the same problem body', async () => {
    const missing = await expect401(undefined);
    const forged = await expect401('Bearer a.b.c');
    assert.equal(missing.body, forged.body);
    assert.doesNotMatch(String(missing.headers['www-authenticate']), /invalid_token/);
    assert.match(String(forged.headers['www-authenticate']), /error="invalid_token"/);
  });

  it('refuses a missing or malformed Authorization header', async () => {
    await expect401(undefined);
    await expect401(`Basic ${b64('user:pass')}`);
    await expect401('Bearer');
    await expect401('Bearer ');
    await expect401('Bearer a b');
    await expect401(`Token ${good}`);
  });

  it('refuses malformed tokens', async () => {
    await expect401('Bearer abc.def');
    await expect401('Bearer @@@.###.$$$');
    await expect401('Bearer ***');
    await expect401(`Bearer ${b64('not json')}.${b64(claims)}.c2ln`);
    await expect401(`Bearer ${good.split('.').slice(0, 2).join('.')}`);
  });

  it('refuses alg none in any spelling', async () => {
    for (const alg of ['none', 'None', 'NONE']) {
      await expect401(`Bearer ${b64({ alg, typ: 'at+jwt', kid })}.${b64(claims)}.`);
      await expect401(`Bearer ${b64({ alg, typ: 'at+jwt', kid })}.${b64(claims)}`);
    }
  });

  it("refuses HS256 signed with the server's public key bytes", async () => {
    const { keys } = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();
    const jwk = keys[0];
    const { importJWK } = await import('jose');
    const spki = await exportSPKI((await importJWK(jwk, jwk.alg, { extractable: true })) as CryptoKey);
    for (const secret of [spki, JSON.stringify(jwk)]) {
      const token = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid })
        .sign(new TextEncoder().encode(secret));
      await expect401(`Bearer ${token}`);
    }
  });

  it('refuses a tampered payload', async () => {
    const [header, , signature] = good.split('.');
    const forged = {
      ...JSON.parse(Buffer.from(good.split('.')[1] as string, 'base64url').toString()),
      tid: 'other',
    };
    await expect401(`Bearer ${header}.${b64(forged)}.${signature}`);
  });

  it("refuses an attacker's key carrying a real kid, and never fetches jku, x5u or jwk keys", async () => {
    const attacker = await generateKeyPair('ES256', { extractable: true });
    const publicJwk = await exportJWK(attacker.publicKey);
    const headers = [
      { kid },
      { kid, jku: listenerUrl },
      { kid: 'attacker', jku: listenerUrl },
      { kid, x5u: listenerUrl },
      { x5u: listenerUrl },
      { kid, jwk: publicJwk },
      { jwk: publicJwk },
    ];
    for (const header of headers) {
      const token = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', ...header })
        .sign(attacker.privateKey);
      await expect401(`Bearer ${token}`);
    }
    assert.equal(listenerHits, 0);
  });

  it('refuses injected or unknown kids', async () => {
    for (const badKid of ['../../dev/null', "' OR 1=1 --", 'x'.repeat(10 * 1024), 'unknown-kid', '']) {
      const { key } = await t.deps.auth.keyring.signingKey();
      const token = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: badKid })
        .sign(key);
      await expect401(`Bearer ${token}`);
    }
  });

  it('refuses an unknown crit header', async () => {
    // jose will not even sign an unknown crit, so the token is signed by hand with the real key.
    const { key } = await t.deps.auth.keyring.signingKey();
    const byHand = async (header: Record<string, unknown>) => {
      const input = `${b64({ alg: 'ES256', typ: 'at+jwt', kid, ...header })}.${b64(claims)}`;
      const signature = await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, key, Buffer.from(input));
      return `Bearer ${input}.${Buffer.from(signature).toString('base64url')}`;
    };
    const control = await t.app.inject({
      method: 'GET',
      url: '/auth/me',
      headers: { authorization: await byHand({}) },
    });
    assert.equal(control.statusCode, 200);
    await expect401(await byHand({ crit: ['urn:x'], 'urn:x': true }));
  });

  it('refuses missing, expired, not-yet-valid and future-issued time claims', async () => {
    const { exp: _exp, ...noExp } = claims;
    await expect401(`Bearer ${await signReal({}, noExp)}`);
    const { iat: _iat, ...noIat } = claims;
    await expect401(`Bearer ${await signReal({}, noIat)}`);
    await expect401(`Bearer ${await signReal({}, { ...claims, exp: nowS - 31 })}`);
    await expect401(`Bearer ${await signReal({}, { ...claims, nbf: nowS + 60 })}`);
    await expect401(`Bearer ${await signReal({}, { ...claims, iat: nowS + 60 })}`);
  });

  it('accepts a token within the 30 s tolerance of exp', async () => {
    const token = await signReal({}, { ...claims, exp: nowS - 20 });
    const response = await t.app.inject({
      method: 'GET',
      url: '/auth/me',
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(response.statusCode, 200);
  });

  it('refuses a lifetime (exp - iat) longer than HERALD_ACCESS_TTL + 30 s, and accepts exactly that', async () => {
    const me = async (payload: Record<string, unknown>) =>
      (
        await t.app.inject({
          method: 'GET',
          url: '/auth/me',
          headers: { authorization: `Bearer ${await signReal({}, payload)}` },
        })
      ).statusCode;
    const longest = t.deps.config.auth.accessTtl + 30;
    const year3000 = Date.UTC(3000, 0, 1) / 1000;
    await expect401(`Bearer ${await signReal({}, { ...claims, exp: year3000 })}`);
    // Issued long ago and so "expiring soon" does not help: the claimed lifetime is what counts.
    await expect401(`Bearer ${await signReal({}, { ...claims, iat: nowS - 86400, exp: nowS + 60 })}`);
    assert.equal(await me({ ...claims, jti: 'j2', exp: nowS + longest + 1 }), 401);
    assert.equal(await me({ ...claims, jti: 'j3', exp: nowS + longest }), 200);
    // Refused again after a success: a cached verification does not let the longer one through.
    assert.equal(await me({ ...claims, jti: 'j2', exp: nowS + longest + 1 }), 401);
  });

  it('refuses a refresh token whose lifetime is longer than HERALD_REFRESH_TTL + 30 s', async () => {
    const user = await createUser(t.deps, { email: 'refresh-lifetime@example.com' });
    const { key, alg } = await t.deps.auth.keyring.signingKey();
    const refresh = (exp: number) =>
      new SignJWT({ tid: user.tenant, auth_time: nowS, login_ms: nowS * 1000 })
        .setProtectedHeader({ alg, kid, typ: 'refresh+jwt' })
        .setIssuer(t.deps.config.auth.issuer)
        .setAudience(`${t.deps.config.auth.issuer}/auth/refresh`)
        .setSubject(user.id)
        .setJti(`r${exp}`)
        .setIssuedAt(nowS)
        .setExpirationTime(exp)
        .sign(key);
    const post = async (token: string) =>
      (await t.app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: token } }))
        .statusCode;
    assert.equal(await post(await refresh(Date.UTC(3000, 0, 1) / 1000)), 401);
    assert.equal(await post(await refresh(nowS + t.deps.config.auth.refreshTtl + 30)), 200);
  });

  it('refuses a wrong iss, aud or typ', async () => {
    await expect401(`Bearer ${await signReal({}, { ...claims, iss: 'https://evil.example' })}`);
    await expect401(`Bearer ${await signReal({}, { ...claims, aud: 'another-api' })}`);
    await expect401(`Bearer ${await signReal({ typ: 'JWT' }, claims)}`);
    await expect401(`Bearer ${await signReal({ typ: undefined }, claims)}`);
  });

  it('refuses claims of the wrong shape', async () => {
    await expect401(`Bearer ${await signReal({}, { ...claims, scope: ['admin'] })}`);
    const { tid: _tid, ...noTenant } = claims;
    await expect401(`Bearer ${await signReal({}, noTenant)}`);
  });

  it('refuses a refresh token used as an access token, and an access token at /auth/refresh', async () => {
    const { createUser, loginAs } = await import('../helpers/auth.ts');
    await createUser(t.deps, { email: 'matrix@example.com' });
    const pair = await loginAs(t.app, 'matrix@example.com');
    await expect401(`Bearer ${pair.refresh_token}`);
    const refresh = await t.app.inject({
      method: 'POST',
      url: '/auth/refresh',
      payload: { refresh_token: pair.access_token },
    });
    assert.equal(refresh.statusCode, 401);
    assert.equal(refresh.json().code, 'AUTH_INVALID_TOKEN');
  });

  it('ignores a token in the query string or a cookie', async () => {
    await expect401(undefined, `/auth/me?access_token=${good}`);
    await expect401(undefined, '/auth/me', { cookie: `access_token=${good}` });
  });

  it('refuses a 10 KB token', async () => {
    await expect401(`Bearer ${good}${'A'.repeat(10 * 1024)}`);
    await expect401(`Bearer ${await signReal({}, { ...claims, pad: 'x'.repeat(10 * 1024) })}`);
  });
});
