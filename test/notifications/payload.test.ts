import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createGroupCommit } from '../../src/notifications/group-commit.ts';
import { countRows, email, notificationsApp, send, webPush } from './fixtures.ts';

/** `{ "a": { "a": ... 1 } }`, `levels` objects deep. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

/** A JSON body whose metadata nests `levels` arrays, written as text (no recursion to build it). */
const deepArrays = (levels: number) =>
  `{"channel":"email","recipient":{"email":"ada@example.com"},"content":{"subject":"s","text":"t"},"metadata":{"x":${'['.repeat(levels)}${']'.repeat(levels)}}}`;

describe('payload limits', () => {
  let t: Awaited<ReturnType<typeof notificationsApp>>;
  before(async () => {
    t = await notificationsApp();
  });
  after(() => t.close());

  it('accepts variables, metadata and push data nested 32 levels deep, and refuses 33 with 400', async () => {
    assert.equal((await send(t.app, t.sender, email({ variables: nested(32) }))).statusCode, 201);
    const before = countRows(t.deps);
    for (const body of [
      email({ variables: nested(33) }),
      email({ metadata: nested(33) }),
      webPush({ content: { title: 't', body: 'b', data: nested(33) } }),
    ]) {
      const response = await send(t.app, t.sender, body);
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(response.json().code, 'VALIDATION_FAILED');
      assert.match(response.json().errors[0].message, /more than 32 levels/);
    }
    assert.equal(countRows(t.deps), before, 'nothing stored');
  });

  it('refuses a 12 KB body nesting 6,000 arrays with 400, not 500', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/notifications',
      headers: { ...t.sender, 'content-type': 'application/json' },
      payload: deepArrays(6000),
    });
    assert.equal(response.statusCode, 400, response.body);
    assert.deepEqual(response.json().errors[0].path, 'body/metadata');
  });

  it('refuses U+0000 in any string or key with 400', async () => {
    const before = countRows(t.deps);
    for (const body of [
      email({ content: { subject: 'a\u0000b', text: 't' } }),
      email({ variables: { name: 'x\u0000' } }),
      email({ metadata: { 'k\u0000': 1 } }),
    ]) {
      const response = await send(t.app, t.sender, body);
      assert.equal(response.statusCode, 400, response.body);
      assert.match(response.json().errors[0].message, /U\+0000/);
    }
    assert.equal(countRows(t.deps), before);
  });

  it('answers a batch with one deep item 207 with that item refused and the others stored', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/notifications/batch',
      headers: t.sender,
      payload: { notifications: [email(), email({ metadata: nested(40) }), email()] },
    });
    assert.equal(response.statusCode, 207);
    const results = response.json().results as Array<{ notificationId?: string; error?: { code: string } }>;
    assert.ok(results[0]?.notificationId && results[2]?.notificationId);
    assert.equal(results[1]?.error?.code, 'VALIDATION_FAILED');
  });

  it("never fails another tenant's concurrent requests", async () => {
    const bad = Array.from({ length: 10 }, () =>
      t.app.inject({
        method: 'POST',
        url: '/notifications',
        headers: { ...t.sender, 'content-type': 'application/json' },
        payload: deepArrays(6000),
      }),
    );
    const good = Array.from({ length: 50 }, () => send(t.app, t.other, email()));
    const answers = await Promise.all([...bad, ...good]);
    assert.deepEqual(
      answers.slice(10).map((r) => r.statusCode),
      Array(50).fill(201),
    );
    assert.ok(answers.slice(0, 10).every((r) => r.statusCode === 400));
  });
});

describe('group commit isolation', () => {
  it('retries the items of a failed batch one by one, so only the bad item fails', async () => {
    const transactions: number[][] = [];
    const batcher = createGroupCommit<number, string>({
      async flush(items) {
        transactions.push(items);
        if (items.includes(13)) throw new Error('cannot store 13');
        return items.map((n) => `stored ${n}`);
      },
    });
    const outcomes = await Promise.allSettled([1, 13, 2].map((n) => batcher.submit(n)));
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(transactions, [[1, 13, 2], [1], [13], [2]]);
    assert.deepEqual(batcher.stats(), { flushes: 2, items: 2, pending: 0 });
  });
});

describe('outbound rules at acceptance', () => {
  let t: Awaited<ReturnType<typeof notificationsApp>>;
  before(async () => {
    t = await notificationsApp({ HERALD_PUSH_ALLOWED_HOSTS: 'push.internal.test,10.9.8.7:8443' });
  });
  after(() => t.close());

  const to = (endpoint: string) =>
    webPush({ recipient: { subscription: { endpoint, keys: { p256dh: 'a', auth: 'b' } } } });

  it('refuses push endpoints naming loopback, private, link-local, unique-local, unspecified or other non-public hosts, or carrying credentials', async () => {
    const before = countRows(t.deps);
    for (const endpoint of [
      'https://127.0.0.1:8443/internal-admin',
      'https://localhost/x',
      'https://api.localhost/x',
      'https://10.0.0.5/x',
      'https://172.16.4.4/x',
      'https://192.168.1.1/x',
      'https://169.254.169.254/latest/meta-data',
      'https://0.0.0.0/x',
      'https://[::1]/x',
      'https://[fd12:3456::1]/x',
      'https://[fe80::1]/x',
      'https://[::ffff:127.0.0.1]/x',
      'https://10.9.8.7/x',
      // IPv6 forms that carry a private IPv4 address: IPv4-compatible, NAT64, 6to4.
      'https://[::127.0.0.1]/x',
      'https://[64:ff9b::10.0.0.5]/x',
      'https://[2002:c0a8:101::1]/x',
      // Not public either: benchmarking, multicast, broadcast, IPv6 multicast.
      'https://198.18.0.1/x',
      'https://224.0.0.1/x',
      'https://255.255.255.255/x',
      'https://[ff02::1]/x',
      // Credentials in the URL are never sent (and would be stored and shown back).
      'https://user:secret@push.example.com/x',
    ]) {
      const response = await send(t.app, t.sender, to(endpoint));
      assert.equal(response.statusCode, 400, endpoint);
      assert.equal(response.json().errors[0].path, 'body/recipient/subscription/endpoint', endpoint);
    }
    assert.equal(countRows(t.deps), before);
  });

  it('accepts public hosts and the hosts HERALD_PUSH_ALLOWED_HOSTS lists', async () => {
    for (const endpoint of [
      'https://fcm.googleapis.com/fcm/send/abc',
      'https://push.internal.test/x',
      'https://10.9.8.7:8443/x',
    ]) {
      assert.equal((await send(t.app, t.sender, to(endpoint))).statusCode, 201, endpoint);
    }
  });
});
