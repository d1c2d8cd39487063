// The OpenID callback is throttled like a login (API.md §2): each callback is counted before
// the code is exchanged, per client address, and uncounted when the sign-in succeeds. Against a
// real provider (oidc-provider), which refuses the made-up codes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { authTestApp } from '../../helpers/auth.ts';
import { startIdp, type TestIdp } from '../../helpers/oidc.ts';

describe('POST /auth/oidc/callback throttling', () => {
  let idp: TestIdp;
  let t: Awaited<ReturnType<typeof authTestApp>>;
  before(async () => {
    idp = await startIdp();
    idp.configure('https://herald.example.com/oidc/callback');
    t = await authTestApp({
      HERALD_OIDC_ISSUER: idp.issuer,
      HERALD_OIDC_CLIENT_ID: idp.clientId,
      HERALD_OIDC_CLIENT_SECRET: idp.clientSecret,
      HERALD_LOGIN_MAX_FAILURES: '3',
    });
  });
  after(async () => {
    await t.close();
    await idp.close();
  });

  const callback = (from: string) =>
    t.app.inject({
      method: 'POST',
      url: '/auth/oidc/callback',
      headers: { 'x-forwarded-for': from },
      payload: {
        code: 'a-made-up-code',
        code_verifier: 'v'.repeat(43),
        nonce: 'n'.repeat(16),
        redirect_uri: 'https://herald.example.com/oidc/callback',
      },
    });

  it('answers 429 with Retry-After once an address has used its allowance, even in a parallel burst', async () => {
    const statuses = (await Promise.all(Array.from({ length: 8 }, () => callback('10.6.0.1')))).map(
      (r) => r.statusCode,
    );
    assert.deepEqual(
      statuses.filter((s) => s !== 429),
      [401, 401, 401],
    );
    const refused = await callback('10.6.0.1');
    assert.equal(refused.statusCode, 429);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.equal((await callback('10.6.0.2')).statusCode, 401, 'another address is not held');
  });
});
