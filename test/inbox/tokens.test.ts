// Recipient tokens (docs/inbox-api.md): POST /recipients/{id}/token mints an access token whose
// subject is the recipient and whose only scope is `inbox`; with it, only the inbox endpoints and
// GET /auth/me answer. And CORS: only the inbox endpoints answer it, for HERALD_INBOX_ORIGINS.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { authHeader, authTestApp } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';

const ORIGIN = 'https://app.example.com';

describe('recipient tokens and CORS', () => {
  let t: Awaited<ReturnType<typeof authTestApp>>;
  let admin: { authorization: string };
  before(async () => {
    t = await authTestApp({ HERALD_INBOX_ORIGINS: `${ORIGIN},https://Other.example.com:8443` });
    admin = await authHeader(t.deps, { role: 'admin' });
    for (const [id, headers] of [
      ['user-42', admin],
      ['elsewhere', await authHeader(t.deps, { role: 'admin', tenant: 'acme' })],
    ] as const) {
      const put = await t.app.inject({
        method: 'PUT',
        url: `/recipients/${id}`,
        headers: { ...headers, 'content-type': 'application/json' },
        payload: JSON.stringify({ email: `${id}@example.com` }),
      });
      assert.ok(put.statusCode < 300, put.body);
    }
  });
  after(() => t.close());

  const mint = (id: string, headers: Record<string, string> = admin) =>
    t.app.inject({ method: 'POST', url: `/recipients/${encodeURIComponent(id)}/token`, headers });
  const as = (token: string) => ({ authorization: `Bearer ${token}` });

  async function recipientToken(id = 'user-42'): Promise<string> {
    const response = await mint(id);
    assert.equal(response.statusCode, 200, response.body);
    return response.json().access_token;
  }

  it('mints an access token for the recipient: rcp: subject, tid, the single scope inbox, HERALD_INBOX_TOKEN_TTL', async () => {
    const response = await mint('user-42');
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['cache-control'], 'no-store');
    const body = response.json();
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 3600);
    const header = decodeProtectedHeader(body.access_token);
    assert.equal(header.typ, 'at+jwt');
    assert.equal(header.alg, 'ES256');
    const claims = decodeJwt(body.access_token);
    assert.equal(claims.sub, 'rcp:user-42');
    assert.equal(claims.tid, 'default');
    assert.equal(claims.scope, 'inbox');
    assert.equal(claims.aud, 'herald-api');
    assert.equal((claims.exp as number) - (claims.iat as number), 3600);
    assert.equal(typeof claims.jti, 'string');
    const me = await t.app.inject({ method: 'GET', url: '/auth/me', headers: as(body.access_token) });
    assert.equal(me.statusCode, 200, me.body);
    assert.deepEqual(me.json(), { sub: 'rcp:user-42', tid: 'default', scope: 'inbox', kind: 'recipient' });
  });

  it('refuses an unknown recipient, another tenant’s, and a caller without recipients:write', async () => {
    for (const id of ['nobody', 'elsewhere']) {
      const response = await mint(id);
      assert.equal(response.statusCode, 404, `${id}: ${response.body}`);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
    }
    const viewer = await mint('user-42', await authHeader(t.deps, { role: 'viewer' }));
    assert.equal(viewer.statusCode, 403);
  });

  it('answers a recipient token 403 on every endpoint but the inbox and GET /auth/me', async () => {
    const token = await recipientToken();
    const sample: Array<[string, string]> = [
      ['GET', '/notifications'],
      ['POST', '/notifications'],
      ['GET', '/notifications/stream'],
      ['GET', '/recipients'],
      ['GET', '/recipients/user-42'],
      ['POST', '/recipients/user-42/token'],
      ['GET', '/templates'],
      ['GET', '/admin/users'],
      ['GET', '/callbacks'],
      ['GET', '/metrics'],
      ['POST', '/auth/logout-all'],
      ['GET', '/categories'],
    ];
    for (const [method, url] of sample) {
      const response = await t.app.inject({
        method: method as 'GET',
        url,
        headers: { ...as(token), 'content-type': 'application/json' },
        ...(method === 'POST' ? { payload: '{}' } : {}),
      });
      assert.equal(response.statusCode, 403, `${method} ${url}: ${response.body}`);
      assert.match(response.json().detail, /recipient token reaches only the inbox/);
    }
  });

  it('keeps the inbox to recipient tokens: no client may be given the inbox scope, and no admin reaches /inbox', async () => {
    const client = await t.app.inject({
      method: 'POST',
      url: '/admin/clients',
      headers: { ...admin, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'sneaky', scopes: ['notifications:read', 'inbox'] }),
    });
    assert.equal(client.statusCode, 400, client.body);
    const inbox = await t.app.inject({ method: 'GET', url: '/inbox/counts', headers: admin });
    assert.equal(inbox.statusCode, 403, inbox.body);
  });

  it('answers CORS on the inbox endpoints only, for the listed origins', async () => {
    const preflight = (url: string, origin?: string) =>
      t.app.inject({
        method: 'OPTIONS',
        url,
        headers: {
          ...(origin ? { origin } : {}),
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization, last-event-id',
        },
      });
    for (const [url, origin] of [
      ['/inbox', ORIGIN],
      ['/inbox/stream', ORIGIN],
      ['/inbox/0193/read', 'https://other.example.com:8443'],
    ] as const) {
      const ok = await preflight(url, origin);
      assert.equal(ok.statusCode, 204, `${url}: ${ok.body}`);
      assert.equal(ok.headers['access-control-allow-origin'], origin);
      assert.match(String(ok.headers['access-control-allow-headers']), /Authorization/);
      assert.match(String(ok.headers['access-control-allow-headers']), /Last-Event-ID/);
      assert.match(String(ok.headers['access-control-allow-methods']), /POST/);
    }
    for (const origin of ['https://evil.example.com', 'http://app.example.com', undefined]) {
      const refused = await preflight('/inbox/counts', origin);
      assert.equal(refused.statusCode, 403, `${origin}: ${refused.body}`);
      assert.match(String(refused.headers['content-type']), /^application\/problem\+json/);
      assert.equal(refused.headers['access-control-allow-origin'], undefined);
    }
    // The request itself: the allowed origin may read even a 401; another origin gets no header.
    const token = await recipientToken();
    const unauthenticated = await t.app.inject({
      method: 'GET',
      url: '/inbox/counts',
      headers: { origin: ORIGIN },
    });
    assert.equal(unauthenticated.statusCode, 401);
    assert.equal(unauthenticated.headers['access-control-allow-origin'], ORIGIN);
    assert.match(String(unauthenticated.headers['access-control-expose-headers']), /WWW-Authenticate/);
    const me = await t.app.inject({
      method: 'GET',
      url: '/auth/me',
      headers: { ...as(token), origin: 'https://evil.example.com' },
    });
    assert.equal(me.statusCode, 200);
    assert.equal(me.headers['access-control-allow-origin'], undefined);
    // No other endpoint answers CORS, for a listed origin either.
    const elsewhere = await t.app.inject({
      method: 'GET',
      url: '/auth/me',
      headers: { ...admin, origin: ORIGIN },
    });
    assert.equal(elsewhere.statusCode, 200);
    assert.equal(elsewhere.headers['access-control-allow-origin'], undefined);
    const preflightElsewhere = await preflight('/notifications', ORIGIN);
    assert.notEqual(preflightElsewhere.statusCode, 204);
    assert.equal(preflightElsewhere.headers['access-control-allow-origin'], undefined);
    const inboxPrefixed = await preflight('/inboxes', ORIGIN);
    assert.equal(inboxPrefixed.headers['access-control-allow-origin'], undefined);
    // An origin is scheme, host and port: a path or a bare host is refused at start.
    for (const bad of ['https://app.example.com/inbox', 'app.example.com', 'https://a.example.com,*']) {
      assert.throws(() => testConfig({ HERALD_INBOX_ORIGINS: bad }), /HERALD_INBOX_ORIGINS/, bad);
    }
  });
  it('refuses a tampered or expired recipient token, and tokens that mix a recipient with other scopes or lifetimes (401)', async () => {
    const token = await recipientToken();
    const [head, payload, signature] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = `${head}.${Buffer.from(JSON.stringify({ ...claims, sub: 'rcp:someone-else' })).toString('base64url')}.${signature}`;
    const tokens = t.deps.auth.tokens;
    const wrong = {
      tampered: forged,
      'a recipient with another scope': (
        await tokens.issueAccess({ sub: 'rcp:user-42', tenant: 'default', scopes: ['inbox', 'admin'] }, 60)
      ).token,
      'a user with the inbox scope': (
        await tokens.issueAccess({ sub: 'usr_1', tenant: 'default', scopes: ['inbox'] }, 60)
      ).token,
      // Only recipient tokens may live HERALD_INBOX_TOKEN_TTL; a user's is bound by HERALD_ACCESS_TTL.
      'a user token of the inbox lifetime': (
        await tokens.issueAccess({ sub: 'usr_1', tenant: 'default', scopes: ['admin'], role: 'admin' }, 3600)
      ).token,
    };
    for (const [what, bad] of Object.entries(wrong)) {
      const response = await t.app.inject({ method: 'GET', url: '/auth/me', headers: as(bad) });
      assert.equal(response.statusCode, 401, `${what}: ${response.body}`);
    }
    const fresh = await t.app.inject({ method: 'GET', url: '/auth/me', headers: as(token) });
    assert.equal(fresh.statusCode, 200);
    // 3600 s plus the 30 s tolerance, then a second more (last: every token here has expired then).
    t.clock.advance(3631 * 1000);
    const expired = await t.app.inject({ method: 'GET', url: '/auth/me', headers: as(token) });
    assert.equal(expired.statusCode, 401, expired.body);
    assert.match(String(expired.headers['www-authenticate']), /invalid_token/);
  });
});
