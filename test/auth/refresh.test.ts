import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import type { UserRecord } from '../../src/store/port/auth.ts';
import { authTestApp, createUser, loginAs } from '../helpers/auth.ts';

describe('POST /auth/refresh', () => {
  let t: Awaited<ReturnType<typeof authTestApp>>;
  let user: UserRecord;
  before(async () => {
    // 1 h sliding lifetime under a 3 h absolute cap, so the cap is reachable by refreshing.
    t = await authTestApp({ HERALD_REFRESH_TTL: '3600', HERALD_REFRESH_MAX_AGE: '10800' });
    user = await createUser(t.deps, { email: 'rea@example.com', role: 'viewer' });
  });
  after(() => t.close());

  const refresh = (payload: unknown) =>
    t.app.inject({ method: 'POST', url: '/auth/refresh', payload: payload as Record<string, unknown> });

  it('returns a new pair with new jtis and no-store caching', async () => {
    const first = await loginAs(t.app, 'rea@example.com');
    const response = await refresh({ refresh_token: first.refresh_token });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['cache-control'], 'no-store');
    const second = response.json();
    assert.notEqual(decodeJwt(second.access_token).jti, decodeJwt(first.access_token).jti);
    assert.notEqual(decodeJwt(second.refresh_token).jti, decodeJwt(first.refresh_token).jti);
    assert.equal(decodeJwt(second.access_token).scope, 'notifications:read templates:read');
    const me = await t.app.inject({
      method: 'GET',
      url: '/auth/me',
      headers: { authorization: `Bearer ${second.access_token}` },
    });
    assert.equal(me.statusCode, 200);
  });

  it('slides the lifetime but never past the absolute cap from the original login', async () => {
    let pair = await loginAs(t.app, 'rea@example.com');
    // Refresh every 50 minutes: each refresh token is good for an hour.
    for (let i = 0; i < 3; i++) {
      t.clock.advance(50 * 60_000);
      const response = await refresh({ refresh_token: pair.refresh_token });
      assert.equal(response.statusCode, 200, `refresh ${i}`);
      pair = response.json();
    }
    // 150 min after login: the last token is cut to the cap (30 min left), not a full hour.
    const body = pair as unknown as { refresh_expires_in: number };
    assert.equal(body.refresh_expires_in, 30 * 60);
    t.clock.advance(31 * 60_000);
    const late = await refresh({ refresh_token: pair.refresh_token });
    assert.equal(late.statusCode, 401);
    assert.equal(late.json().code, 'AUTH_INVALID_TOKEN');
  });

  it('refuses an expired refresh token', async () => {
    const pair = await loginAs(t.app, 'rea@example.com');
    t.clock.advance(3600_000 + 31_000);
    assert.equal((await refresh({ refresh_token: pair.refresh_token })).statusCode, 401);
  });

  it('refuses a disabled user', async () => {
    const other = await createUser(t.deps, { email: 'gone@example.com' });
    const pair = await loginAs(t.app, 'gone@example.com');
    await t.deps.store.auth.setUserDisabled(other.id, true);
    const response = await refresh({ refresh_token: pair.refresh_token });
    assert.equal(response.statusCode, 401);
    assert.equal(response.json().code, 'AUTH_INVALID_TOKEN');
    assert.ok(user);
  });

  it('refuses missing, malformed, forged and access tokens with 401', async () => {
    const pair = await loginAs(t.app, 'rea@example.com');
    const [h, p] = pair.refresh_token.split('.');
    for (const payload of [
      {},
      { refresh_token: '' },
      { refresh_token: 'not.a.token' },
      { refresh_token: `${h}.${p}.AAAA` },
      { refresh_token: pair.access_token },
    ]) {
      const response = await refresh(payload);
      assert.equal(response.statusCode, 401, JSON.stringify(payload));
      assert.equal(response.json().code, 'AUTH_INVALID_TOKEN');
    }
    const noBody = await t.app.inject({ method: 'POST', url: '/auth/refresh' });
    assert.equal(noBody.statusCode, 401);
  });
});
