// @herald/client with client credentials against a real Herald whose access tokens last 4 s:
// it fetches a token once for concurrent calls, renews it before it expires (never waiting for a
// 401), and when Herald refuses a token early (its signing key removed) it fetches a new one
// and repeats the call, once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createHeraldClient, HeraldApiError } from '../../clients/typescript/src/index.ts';
import type { Herald } from '../../src/main.ts';
import { CLIENT_ADMIN as ADMIN, startClientHerald } from '../helpers/client-herald.ts';
import { eventually } from '../helpers/eventually.ts';

describe('@herald/client: client credentials and token renewal', () => {
  let herald: Herald;
  let baseUrl: string;
  let admin: ReturnType<typeof createHeraldClient>;

  /** A client of a new service client, recording each request it makes: path and answer status. */
  async function serviceClient() {
    const created = await admin.api.POST('/admin/clients', {
      body: { name: `renewal-${Date.now()}`, scopes: ['notifications:send', 'notifications:read'] },
    });
    assert.equal(created.response.status, 201);
    const id = created.data?.client_id as string;
    const calls: Array<{ path: string; status: number }> = [];
    const client = createHeraldClient({
      baseUrl,
      credentials: { clientId: id, clientSecret: created.data?.client_secret as string },
      fetch: async (input, init) => {
        const request = new Request(input, init);
        const response = await fetch(request);
        calls.push({ path: new URL(request.url).pathname, status: response.status });
        return response;
      },
    });
    return { id, client, calls, tokens: () => calls.filter((c) => c.path === '/auth/token').length };
  }

  const email = (to: string) => ({
    channel: 'email' as const,
    recipient: { email: to },
    content: { subject: 'Hello', text: 'Hi there' },
  });

  /** Removes the signing key of every token issued so far; resolves once Herald refuses `token`. */
  async function removeSigningKey(token: string) {
    const { retired } = await herald.deps.auth.keyring.rotate();
    assert.ok(retired);
    assert.ok(await herald.store.auth.deleteSigningKey(retired));
    await eventually(
      async () => {
        const answer = await fetch(`${baseUrl}/notifications?limit=1`, {
          headers: { authorization: `Bearer ${token}` },
        });
        return answer.status === 401;
      },
      10_000,
      'the removed key to be refused',
    );
  }

  before(async () => {
    herald = await startClientHerald({
      HERALD_ACCESS_TTL: '4',
      // A removed signing key is refused within 0.1 s rather than 5 s.
      HERALD_KEY_RELOAD_MS: '100',
    });
    baseUrl = herald.apiUrl as string;
    admin = createHeraldClient({ baseUrl, credentials: ADMIN });
  });
  after(() => herald.close());

  it('fetches one token for concurrent calls, and reuses it', async () => {
    const { client, calls, tokens } = await serviceClient();
    await Promise.all([1, 2, 3, 4, 5].map((n) => client.send(email(`concurrent-${n}@example.com`))));
    // The 4 s token is shorter-lived than the 30 s margin: it is still kept for half its life.
    await client.send(email('after@example.com'));
    assert.equal(tokens(), 1, JSON.stringify(calls));
  });

  it('renews the token before it expires, without a 401', async () => {
    const { client, calls, tokens } = await serviceClient();
    await client.send(email('first@example.com'));
    const first = await client.accessToken();
    // Past half of the 4 s lifetime: the next call fetches a new token first.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    await client.send(email('second@example.com'));
    assert.notEqual(await client.accessToken(), first);
    assert.equal(tokens(), 2);
    assert.deepEqual(
      calls.filter((c) => c.status === 401),
      [],
    );
  });

  it('fetches a new token and repeats the call once when Herald refuses the token early', async () => {
    const { client, calls } = await serviceClient();
    await removeSigningKey(await client.accessToken());
    const accepted = await client.send(email('retried@example.com'));
    assert.ok(accepted.notificationId);
    assert.deepEqual(calls, [
      { path: '/auth/token', status: 200 },
      { path: '/notifications', status: 401 },
      { path: '/auth/token', status: 200 },
      { path: '/notifications', status: 201 },
    ]);
  });

  it('repeats a refused call only once', async () => {
    const { id, client, calls } = await serviceClient();
    const token = await client.accessToken();
    // Disabled: its token still verifies until the key goes, and no new token is issued.
    const disabled = await admin.api.POST('/admin/clients/{id}/disable', { params: { path: { id } } });
    assert.ok(disabled.response.ok);
    await removeSigningKey(token);
    const refused = await client.send(email('never@example.com')).catch((error: unknown) => error);
    assert.ok(refused instanceof HeraldApiError);
    assert.equal(refused.status, 401);
    assert.equal(refused.oauthError?.error, 'invalid_client');
    assert.equal(refused.message, '401 invalid_client: Client authentication failed.');
    assert.deepEqual(
      calls.map((c) => `${c.path} ${c.status}`),
      ['/auth/token 200', '/notifications 401', '/auth/token 401'],
    );
  });

  it('sends a token it was given as it is: a 401 is the answer', async () => {
    const { client: service } = await serviceClient();
    const token = await service.accessToken();
    await removeSigningKey(token);
    const fixed = createHeraldClient({ baseUrl, credentials: { accessToken: token } });
    const refused = await fixed.get('0').catch((error: unknown) => error);
    assert.ok(refused instanceof HeraldApiError);
    assert.equal(refused.status, 401);
  });
});
