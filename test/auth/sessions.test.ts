// Ending sessions and rotating credentials (API.md §2): each ends exactly what the contract
// says. Refresh tokens issued before the user's "sessions valid after" time are refused; access
// tokens live until they expire; a rotated client secret is refused at once; a disabled client
// gets no more tokens.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { authHeader, authTestApp, createUser } from '../helpers/auth.ts';

const PASSWORD = 'correct horse battery staple';

describe('signing out everywhere, password change, client rotation', () => {
  let t: Awaited<ReturnType<typeof authTestApp>>;
  /** An admin's header, minted now (tests move the clock past a token's lifetime). */
  let admin: { authorization: string };
  before(async () => {
    t = await authTestApp({ HERALD_LOGIN_MAX_FAILURES: '2' });
  });
  beforeEach(async () => {
    admin = await authHeader(t.deps, { role: 'admin' });
  });
  after(() => t.close());

  const call = (method: 'GET' | 'POST', url: string, payload?: object, headers: object = {}) =>
    t.app.inject({ method, url, payload, headers: headers as Record<string, string> });
  const login = async (email: string, password = PASSWORD) => {
    const response = await call('POST', '/auth/login', { email, password });
    t.clock.advance(1); // sessions begin at distinct milliseconds
    return response;
  };
  const refresh = (token: string) => call('POST', '/auth/refresh', { refresh_token: token });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it('POST /auth/logout-all ends every refresh token of the caller, not its access token nor later sessions', async () => {
    await createUser(t.deps, { email: 'ada@example.com', password: PASSWORD, role: 'sender' });
    await createUser(t.deps, { email: 'bob@example.com', password: PASSWORD, role: 'sender' });
    const phone = (await login('ada@example.com')).json();
    const laptop = (await login('ada@example.com')).json();
    const other = (await login('bob@example.com')).json();
    assert.equal((await refresh(phone.refresh_token)).statusCode, 200);
    assert.equal(
      (await call('POST', '/auth/logout-all', undefined, bearer(laptop.access_token))).statusCode,
      204,
    );
    t.clock.advance(1);
    assert.equal((await refresh(phone.refresh_token)).statusCode, 401);
    assert.equal((await refresh(laptop.refresh_token)).statusCode, 401);
    assert.equal((await refresh(other.refresh_token)).statusCode, 200, "another user's session goes on");
    assert.equal((await call('GET', '/auth/me', undefined, bearer(laptop.access_token))).statusCode, 200);
    const again = (await login('ada@example.com')).json();
    assert.equal((await refresh(again.refresh_token)).statusCode, 200, 'a session begun after it works');
    // A service client has no sessions.
    const made = (
      await call('POST', '/admin/clients', { name: 'ops', scopes: ['notifications:send'] }, admin)
    ).json();
    const issued = await call('POST', '/auth/token', {
      grant_type: 'client_credentials',
      client_id: made.client_id,
      client_secret: made.client_secret,
    });
    const client = bearer(issued.json().access_token);
    assert.equal((await call('POST', '/auth/logout-all', undefined, client)).statusCode, 403);
  });

  it('POST /admin/users/{id}/revoke-sessions and disabling a user end its sessions', async () => {
    const made = (
      await call(
        'POST',
        '/admin/users',
        { email: 'cy@example.com', password: PASSWORD, role: 'viewer', tenant: 'acme' },
        admin,
      )
    ).json();
    const session = (await login('cy@example.com')).json();
    assert.equal(
      (await call('POST', `/admin/users/${made.id}/revoke-sessions`, undefined, admin)).statusCode,
      204,
    );
    t.clock.advance(1);
    assert.equal((await refresh(session.refresh_token)).statusCode, 401);
    const later = (await login('cy@example.com')).json();
    assert.equal((await refresh(later.refresh_token)).statusCode, 200);
    // Another tenant's admin sees no such user.
    const acmeAdmin = await authHeader(t.deps, { role: 'admin', tenant: 'other' });
    assert.equal(
      (await call('POST', `/admin/users/${made.id}/revoke-sessions`, undefined, acmeAdmin)).statusCode,
      404,
    );
    assert.equal(
      (await call('POST', '/admin/users/usr_nobody/revoke-sessions', undefined, admin)).statusCode,
      404,
    );
    assert.equal((await call('POST', `/admin/users/${made.id}/disable`, undefined, admin)).statusCode, 200);
    assert.notEqual((await t.deps.store.auth.findUserById(made.id))?.sessionsValidAfter, null);
  });

  it('POST /auth/password checks the current password (a failed login if wrong) and ends every session', async () => {
    await createUser(t.deps, { email: 'dee@example.com', password: PASSWORD, role: 'sender' });
    const session = (await login('dee@example.com')).json();
    const me = bearer(session.access_token);
    const change = (currentPassword: string, newPassword: string) =>
      call('POST', '/auth/password', { currentPassword, newPassword }, me);
    const short = await change(PASSWORD, 'eleven char');
    assert.equal(short.statusCode, 400);
    assert.equal(short.json().code, 'VALIDATION_FAILED');
    const wrong = await change('not my password', 'a brand new passphrase');
    assert.equal(wrong.statusCode, 401);
    assert.equal(wrong.json().code, 'AUTH_INVALID_CREDENTIALS');
    assert.equal((await change(PASSWORD, 'a brand new passphrase')).statusCode, 204);
    t.clock.advance(1);
    assert.equal((await refresh(session.refresh_token)).statusCode, 401);
    assert.equal((await login('dee@example.com')).statusCode, 401, 'the old password is refused');
    // Two failures now (the wrong current password counted): the limit is reached.
    assert.equal((await login('dee@example.com', 'a brand new passphrase')).statusCode, 429);
    t.clock.advance(16 * 60_000);
    assert.equal((await login('dee@example.com', 'a brand new passphrase')).statusCode, 200);
  });

  it('refuses passwords under 12 characters for new users', async () => {
    const response = await call(
      'POST',
      '/admin/users',
      { email: 'eve@example.com', password: 'elevenchars', role: 'viewer' },
      admin,
    );
    assert.equal(response.statusCode, 400);
  });

  it('rotates a client secret (the old one refused at once) and disables a client', async () => {
    const made = (
      await call('POST', '/admin/clients', { name: 'billing', scopes: ['notifications:send'] }, admin)
    ).json();
    const token = (secret: string) =>
      call('POST', '/auth/token', {
        grant_type: 'client_credentials',
        client_id: made.client_id,
        client_secret: secret,
      });
    assert.equal((await token(made.client_secret)).statusCode, 200);
    const rotated = await call('POST', `/admin/clients/${made.client_id}/rotate`, undefined, admin);
    assert.equal(rotated.statusCode, 200);
    assert.equal(rotated.headers['cache-control'], 'no-store');
    assert.deepEqual(Object.keys(rotated.json()).sort(), ['client_id', 'client_secret']);
    assert.equal((await token(made.client_secret)).statusCode, 401);
    assert.equal((await token(rotated.json().client_secret)).statusCode, 200);
    const disabled = await call('POST', `/admin/clients/${made.client_id}/disable`, undefined, admin);
    assert.equal(disabled.statusCode, 200);
    assert.equal(disabled.json().disabled, true);
    assert.equal((await token(rotated.json().client_secret)).statusCode, 401);
    assert.equal((await call('POST', '/admin/clients/cli_nobody/rotate', undefined, admin)).statusCode, 404);
    const otherAdmin = await authHeader(t.deps, { role: 'admin', tenant: 'other' });
    assert.equal(
      (await call('POST', `/admin/clients/${made.client_id}/disable`, undefined, otherAdmin)).statusCode,
      404,
    );
  });
});
