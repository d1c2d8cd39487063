// @herald/client against a real Herald (in-process, listening on a real port): sign-in and
// renewal, idempotent sends, batches, waitFor with If-None-Match, client credentials, errors;
// and the generated types are those of the document as the code is now.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createHeraldClient, HeraldApiError } from '../../clients/typescript/src/index.ts';
import { generatedSchema, SCHEMA_FILE } from '../../scripts/generate-client.ts';
import type { Herald } from '../../src/main.ts';
import { CLIENT_ADMIN as ADMIN, startClientHerald } from '../helpers/client-herald.ts';

describe('@herald/client', () => {
  let herald: Herald;
  let baseUrl: string;
  /** Every request the clients made: method and path (query left out). */
  const calls: Array<{ method: string; path: string; ifNoneMatch: boolean; status: number }> = [];
  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const response = await fetch(request);
    calls.push({
      method: request.method,
      path: new URL(request.url).pathname,
      ifNoneMatch: request.headers.has('if-none-match'),
      status: response.status,
    });
    return response;
  };

  before(async () => {
    // Short-lived access tokens, so that the client has to renew one during the test.
    herald = await startClientHerald({ HERALD_ACCESS_TTL: '2' });
    baseUrl = herald.apiUrl as string;
  });
  after(() => herald.close());

  const email = (to: string, extra: object = {}) => ({
    channel: 'email' as const,
    recipient: { email: to },
    content: { subject: 'Hello', text: 'Hi there' },
    ...extra,
  });

  it('signs in, sends idempotently, renews its token before it expires', async () => {
    const client = createHeraldClient({
      baseUrl,
      credentials: ADMIN,
      refreshMarginMs: 1000,
      fetch: recording,
    });
    const first = await client.send(email('ada@example.com'), { idempotencyKey: 'client-test-1' });
    const replay = await client.send(email('ada@example.com'), { idempotencyKey: 'client-test-1' });
    assert.equal(replay.notificationId, first.notificationId);
    assert.equal(calls.filter((c) => c.path === '/auth/login').length, 1);
    // The 2 s token is within the 1 s margin after 1.1 s: the next call renews it first.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const found = await client.get(first.notificationId);
    assert.equal(found.notificationId, first.notificationId);
    assert.equal(calls.filter((c) => c.path === '/auth/refresh' && c.status === 200).length, 1);
    assert.equal(calls.filter((c) => c.path === '/auth/login').length, 1);
  });

  it('sends a batch, each item on its own', async () => {
    const client = createHeraldClient({ baseUrl, credentials: ADMIN });
    const { results } = await client.sendBatch([
      email('b@example.com'),
      // Invalid: a recipient without an address.
      { channel: 'email', recipient: {}, content: { subject: 'x', text: 'y' } } as never,
    ]);
    assert.equal(results.length, 2);
    assert.ok('notificationId' in (results[0] ?? {}));
    assert.equal((results[1] as { error?: { code: string } }).error?.code, 'VALIDATION_FAILED');
  });

  it('waits for a status, polling with If-None-Match', async () => {
    const client = createHeraldClient({ baseUrl, credentials: ADMIN, fetch: recording });
    const soon = new Date(Date.now() + 1500).toISOString();
    const accepted = await client.send(email('later@example.com', { scheduledAt: soon }));
    const done = await client.waitFor(accepted.notificationId, ['DELIVERED', 'FAILED'], { intervalMs: 50 });
    assert.equal(done.status, 'DELIVERED');
    const polls = calls.filter((c) => c.path === `/notifications/${accepted.notificationId}`);
    assert.ok(
      polls.some((c) => c.ifNoneMatch && c.status === 304),
      'unchanged polls cost a 304',
    );
  });

  it('uses OAuth2 client credentials, and the typed API for everything else', async () => {
    const admin = createHeraldClient({ baseUrl, credentials: ADMIN });
    const created = await admin.api.POST('/admin/clients', {
      body: { name: 'billing', scopes: ['notifications:send', 'notifications:read'] },
    });
    assert.equal(created.response.status, 201);
    const service = createHeraldClient({
      baseUrl,
      credentials: {
        clientId: created.data?.client_id as string,
        clientSecret: created.data?.client_secret as string,
      },
    });
    const accepted = await service.send(email('invoice@example.com'));
    assert.equal((await service.get(accepted.notificationId)).channel, 'email');
  });

  it('throws HeraldApiError with the problem+json of a refused call', async () => {
    const client = createHeraldClient({ baseUrl, credentials: ADMIN });
    const refused = await client.send({ channel: 'email' } as never).catch((error: unknown) => error);
    assert.ok(refused instanceof HeraldApiError);
    assert.equal(refused.status, 400);
    assert.equal(refused.problem?.code, 'VALIDATION_FAILED');
    // The message a log shows names each field error, not only the summary.
    const invalid = await client
      .send({
        channel: 'email',
        recipient: { email: 'not an address' },
        content: { subject: 'x', text: 'y' },
      })
      .catch((error: unknown) => error);
    assert.ok(invalid instanceof HeraldApiError);
    const fieldErrors = invalid.problem?.errors ?? [];
    assert.ok(fieldErrors.length > 0);
    for (const { path, message } of fieldErrors) assert.ok(invalid.message.includes(`${path}: ${message}`));
    assert.match(invalid.message, /^400 VALIDATION_FAILED: .+ \(.*recipient\/email: .+\)$/);
    const wrong = createHeraldClient({
      baseUrl,
      credentials: { email: ADMIN.email, password: 'not the password' },
    });
    const denied = await wrong.get('x').catch((error: unknown) => error);
    assert.ok(denied instanceof HeraldApiError);
    assert.equal(denied.problem?.code, 'AUTH_INVALID_CREDENTIALS');
  });

  it('ships types generated from the current document (npm run client:generate)', async () => {
    assert.equal(readFileSync(SCHEMA_FILE, 'utf8'), await generatedSchema());
  });
});
