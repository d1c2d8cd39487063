import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { clientAddress, trustedProxies } from '../../src/auth/client-address.ts';
import { loadConfig } from '../../src/config/config.ts';
import { authTestApp, createUser } from '../helpers/auth.ts';

const PASSWORD = 'correct horse battery staple';

describe('login throttling', () => {
  let t: Awaited<ReturnType<typeof authTestApp>>;
  before(async () => {
    t = await authTestApp({ HERALD_LOGIN_MAX_FAILURES: '3', HERALD_LOGIN_MAX_FAILURES_PER_ADDRESS: '5' });
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f', 'g'])
      await createUser(t.deps, { email: `${name}@example.com` });
  });
  after(() => t.close());

  // The test peer is 127.0.0.1, a trusted proxy by default, so X-Forwarded-For picks the address.
  const login = (email: string, password: string, from: string, remoteAddress = '127.0.0.1') =>
    t.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email, password },
      headers: { 'x-forwarded-for': from },
      remoteAddress,
    });

  it('answers 429 with Retry-After for an email over its limit, right password or not, until the window frees', async () => {
    for (let i = 0; i < 3; i++) {
      assert.equal((await login('a@example.com', 'wrong', '10.0.0.1')).statusCode, 401);
      t.clock.advance(60_000);
    }
    const blocked = await login('a@example.com', PASSWORD, '10.0.0.2');
    assert.equal(blocked.statusCode, 429);
    assert.equal(blocked.json().code, 'RATE_LIMITED');
    // The third failure was 1 min ago... the first 3 min ago: it leaves the window in 12 min.
    assert.equal(blocked.headers['retry-after'], String(12 * 60));
    // Another email from the same address stays usable.
    assert.equal((await login('b@example.com', PASSWORD, '10.0.0.1')).statusCode, 200);
    t.clock.advance(12 * 60_000 + 1000);
    assert.equal((await login('a@example.com', PASSWORD, '10.0.0.1')).statusCode, 200);
  });

  it('neither counts nor resets on a success', async () => {
    await login('c@example.com', 'wrong', '10.0.1.1');
    await login('c@example.com', 'wrong', '10.0.1.1');
    for (let i = 0; i < 5; i++)
      assert.equal((await login('c@example.com', PASSWORD, '10.0.1.1')).statusCode, 200);
    await login('c@example.com', 'wrong', '10.0.1.1');
    assert.equal((await login('c@example.com', PASSWORD, '10.0.1.1')).statusCode, 429);
  });

  it('limits one client address across emails', async () => {
    for (const name of ['nobody1', 'nobody2', 'nobody3', 'nobody4', 'nobody5']) {
      assert.equal((await login(`${name}@example.com`, 'wrong', '10.0.2.1')).statusCode, 401);
    }
    const blocked = await login('d@example.com', PASSWORD, '10.0.2.1');
    assert.equal(blocked.statusCode, 429);
    assert.ok(Number(blocked.headers['retry-after']) > 0);
    assert.equal((await login('d@example.com', PASSWORD, '10.0.2.2')).statusCode, 200);
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    for (let i = 0; i < 5; i++) await login(`x${i}@example.com`, 'wrong', `10.9.0.${i}`, '192.0.2.7');
    // Each attempt claimed another address, but all came from 192.0.2.7: that address is now blocked.
    assert.equal((await login('e@example.com', PASSWORD, '10.9.9.9', '192.0.2.7')).statusCode, 429);
    assert.equal((await login('e@example.com', PASSWORD, '10.9.9.9')).statusCode, 200);
  });

  it('counts only /auth/login: a refused refresh is not a login failure', async () => {
    for (let i = 0; i < 6; i++) {
      await t.app.inject({ method: 'POST', url: '/auth/refresh', payload: { refresh_token: 'x.y.z' } });
    }
    assert.equal((await login('f@example.com', PASSWORD, '127.0.0.1')).statusCode, 200);
  });
});

describe('client address behind proxies', () => {
  const request = (remoteAddress: string, xff?: string) =>
    ({
      socket: { remoteAddress },
      ip: remoteAddress,
      headers: xff ? { 'x-forwarded-for': xff } : {},
    }) as unknown as FastifyRequest;
  const trusted = trustedProxies(['127.0.0.1', '::1', '10.0.0.0/8']);

  it('takes the right-most X-Forwarded-For entry that is not a trusted proxy', () => {
    assert.equal(
      clientAddress(request('127.0.0.1', '6.6.6.6, 203.0.113.9, 10.1.2.3'), trusted),
      '203.0.113.9',
    );
    assert.equal(clientAddress(request('::ffff:10.0.0.1', '203.0.113.9'), trusted), '203.0.113.9');
  });

  it('uses the peer when it is not trusted or sent no header', () => {
    assert.equal(clientAddress(request('198.51.100.1', '203.0.113.9'), trusted), '198.51.100.1');
    assert.equal(clientAddress(request('127.0.0.1'), trusted), '127.0.0.1');
  });

  it('refuses a malformed trusted-proxy entry, naming HERALD_TRUSTED_PROXIES at start-up', () => {
    assert.throws(() => trustedProxies(['not-an-ip']), TypeError);
    for (const bad of ['proxy.local', '10.0.0.0/33', '10.0.0.0/x']) {
      assert.throws(() => loadConfig({ HERALD_TRUSTED_PROXIES: `127.0.0.1,${bad}` }), {
        name: 'ConfigError',
        message: /HERALD_TRUSTED_PROXIES/,
      });
    }
    assert.deepEqual(loadConfig({ HERALD_TRUSTED_PROXIES: '10.0.0.0/8, fd00::/8' }).trustedProxies, [
      '10.0.0.0/8',
      'fd00::/8',
    ]);
  });
});
