import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { countRows, devicePush, email, notificationsApp, send, sms, webPush } from './fixtures.ts';

type T = Awaited<ReturnType<typeof notificationsApp>>;

describe('POST /notifications', () => {
  let t: T;
  before(async () => {
    t = await notificationsApp();
  });
  after(() => t.close());

  it('accepts each channel with 201, a Location and the contract body', async () => {
    for (const body of [email(), sms(), webPush(), devicePush({ priority: 'CRITICAL' })]) {
      const response = await send(t.app, t.sender, body);
      assert.equal(response.statusCode, 201, response.body);
      const json = response.json();
      assert.equal(response.headers.location, `/notifications/${json.notificationId}`);
      assert.deepEqual(Object.keys(json).sort(), [
        'channel',
        'createdAt',
        'notificationId',
        'priority',
        'status',
      ]);
      assert.equal(json.status, 'QUEUED');
      assert.equal(json.channel, body.channel);
      assert.equal(json.priority, body.priority ?? 'NORMAL');
      assert.equal(json.createdAt, new Date(t.clock.now()).toISOString());
    }
  });

  // Each bad field gets its 4xx and nothing is stored.
  const matrix: Array<[string, unknown, number, string]> = [
    ['a missing channel', { ...email(), channel: undefined }, 400, 'body/channel'],
    ['an unknown channel', email({ channel: 'fax' }), 400, 'body/channel'],
    ['an unknown priority', email({ priority: 'URGENT' }), 400, 'body/priority'],
    ['a missing recipient', { ...email(), recipient: undefined }, 400, 'body/recipient'],
    ['a bad email', email({ recipient: { email: 'not-an-email' } }), 400, 'body/recipient/email'],
    ['an email with a phone', email({ recipient: { phone: '+15550101234' } }), 400, 'body/recipient/phone'],
    ['a phone not in E.164', sms({ recipient: { phone: '555-0101' } }), 400, 'body/recipient/phone'],
    ['a phone without +', sms({ recipient: { phone: '15550101234' } }), 400, 'body/recipient/phone'],
    [
      'a push endpoint without https',
      webPush({
        recipient: { subscription: { endpoint: 'http://x.example/1', keys: { p256dh: 'a', auth: 'b' } } },
      }),
      400,
      'body/recipient/subscription/endpoint',
    ],
    [
      'a push subscription without keys',
      webPush({ recipient: { subscription: { endpoint: 'https://x.example/1' } } }),
      400,
      'body/recipient/subscription/keys',
    ],
    [
      'an unknown push platform',
      devicePush({ recipient: { deviceToken: 'a1b2c3d4e5f6', platform: 'windows' } }),
      400,
      'body/recipient/platform',
    ],
    [
      'a recipient with an extra field',
      email({ recipient: { email: 'a@example.com', name: 'A' } }),
      400,
      'body/recipient/name',
    ],
    ['an unknown top-level field', email({ cc: 'b@example.com' }), 400, 'body/cc'],
    ['an unknown content field', email({ content: { subject: 's', body: 'b' } }), 400, 'body/content/body'],
    ['email content without subject', email({ content: { text: 't' } }), 400, 'body/content/subject'],
    ['sms content without text', sms({ content: {} }), 400, 'body/content/text'],
    ['push content without title', devicePush({ content: { body: 'b' } }), 400, 'body/content/title'],
    ['both template and content', email({ template: 'welcome' }), 400, 'body/content'],
    ['neither template nor content', { ...email(), content: undefined }, 400, 'body/template'],
    ['a template key with spaces', { ...email(), content: undefined, template: 'a b' }, 400, 'body/template'],
    ['variables that are not an object', email({ variables: ['x'] }), 400, 'body/variables'],
    ['metadata that is not an object', email({ metadata: 'x' }), 400, 'body/metadata'],
    ['an expiresAt that is not a time', email({ expiresAt: 'tomorrow' }), 400, 'body/expiresAt'],
    ['an impossible date', email({ expiresAt: '2026-02-31T99:00:00Z' }), 400, 'body/expiresAt'],
    // Date.parse takes these for March 2nd and May 1st: a user's mistake, not a time to move to.
    ['a day past the end of February', email({ expiresAt: '2026-02-30T00:00:00Z' }), 400, 'body/expiresAt'],
    ['a day past the end of April', email({ scheduledAt: '2026-04-31T10:00:00Z' }), 400, 'body/scheduledAt'],
    ['hour 24', email({ scheduledAt: '2026-04-30T24:00:00Z' }), 400, 'body/scheduledAt'],
    ['an expiresAt in the past', email({ expiresAt: '2025-01-01T00:00:00Z' }), 400, 'body/expiresAt'],
    [
      'a scheduledAt after expiresAt',
      email({ scheduledAt: '2026-01-03T00:00:00Z', expiresAt: '2026-01-02T00:00:00Z' }),
      400,
      'body/scheduledAt',
    ],
    [
      'inline content with a Liquid syntax error',
      email({ content: { subject: 'Hi {{ name', text: 't' } }),
      400,
      'body/content/subject',
    ],
    ['an array body', [email()], 400, 'body'],
    ['an unknown template', { ...email(), content: undefined, template: 'nope' }, 422, 'body/template'],
  ];
  for (const [what, body, status, path] of matrix) {
    it(`refuses ${what} with ${status} and stores nothing`, async () => {
      const before = countRows(t.deps);
      const response = await send(t.app, t.sender, body);
      assert.equal(response.statusCode, status, response.body);
      assert.match(response.headers['content-type'] as string, /^application\/problem\+json/);
      const problem = response.json();
      assert.equal(problem.code, status === 422 ? 'TEMPLATE_NOT_FOUND' : 'VALIDATION_FAILED');
      assert.ok(
        problem.errors.some((e: { path: string }) => e.path === path),
        `expected an error at ${path}: ${JSON.stringify(problem.errors)}`,
      );
      assert.equal(countRows(t.deps), before);
    });
  }

  it("refuses inline SMS text over 1,600 characters (Twilio's limit) with 400 naming the limit", async () => {
    const exact = await send(t.app, t.sender, sms({ content: { text: 'a'.repeat(1600) } }));
    assert.equal(exact.statusCode, 201, exact.body);
    const before = countRows(t.deps);
    const response = await send(t.app, t.sender, sms({ content: { text: 'a'.repeat(1601) } }));
    assert.equal(response.statusCode, 400, response.body);
    const error = response.json().errors.find((e: { path: string }) => e.path === 'body/content/text');
    assert.ok(error, response.body);
    assert.match(error.message, /1600/);
    assert.equal(countRows(t.deps), before);
  });

  it('refuses a template of another channel with 422', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/templates',
      headers: t.admin,
      payload: { key: 'sms-only', channel: 'sms', text: 'hi' },
    });
    assert.equal(created.statusCode, 201);
    const before = countRows(t.deps);
    const response = await send(t.app, t.sender, { ...email(), content: undefined, template: 'sms-only' });
    assert.equal(response.statusCode, 422);
    assert.equal(response.json().code, 'TEMPLATE_NOT_FOUND');
    assert.equal(countRows(t.deps), before);
  });

  it('refuses malformed JSON, a wrong content type and an oversized body with 4xx, storing nothing', async () => {
    const before = countRows(t.deps);
    const malformed = await t.app.inject({
      method: 'POST',
      url: '/notifications',
      headers: { ...t.sender, 'content-type': 'application/json' },
      payload: '{"channel": "email",',
    });
    assert.equal(malformed.statusCode, 400);
    assert.equal(malformed.json().code, 'MALFORMED_BODY');
    const text = await t.app.inject({
      method: 'POST',
      url: '/notifications',
      headers: { ...t.sender, 'content-type': 'text/plain' },
      payload: JSON.stringify(email()),
    });
    assert.equal(text.statusCode, 415);
    const big = await send(t.app, t.sender, email({ metadata: { blob: 'x'.repeat(70 * 1024) } }));
    assert.equal(big.statusCode, 413);
    assert.equal(big.json().code, 'PAYLOAD_TOO_LARGE');
    assert.equal(countRows(t.deps), before);
  });

  it('needs the notifications:send scope', async () => {
    const response = await send(t.app, t.viewer, email());
    assert.equal(response.statusCode, 403);
    const anonymous = await send(t.app, {}, email());
    assert.equal(anonymous.statusCode, 401);
  });

  it('queues a future scheduledAt as waiting and a past one as ready', async () => {
    const db = (t.deps.store as unknown as { db: import('better-sqlite3').Database }).db;
    const state = (id: string) =>
      db.prepare('SELECT queue_state, due_at FROM notifications WHERE id = ?').get(id);
    const later = await send(t.app, t.sender, email({ scheduledAt: '2026-01-01T01:00:00Z' }));
    assert.deepEqual(state(later.json().notificationId), {
      queue_state: 'waiting',
      due_at: Date.parse('2026-01-01T01:00:00Z'),
    });
    const past = await send(t.app, t.sender, email({ scheduledAt: '2025-12-31T00:00:00+01:00' }));
    assert.deepEqual(state(past.json().notificationId), { queue_state: 'ready', due_at: null });
  });

  it('wakes the worker after the commit', async () => {
    await t.deps.worker.wakeup.wait(0); // consume a wake-up an earlier test may have left pending
    const woken = t.deps.worker.wakeup.wait(60_000).then(() => 'woken');
    await send(t.app, t.sender, sms());
    // wait() also resolves on its timeout, so the race against a timer tells which happened: the
    // commit called notify() (woken) or nothing did (the timer wins long before the 60 s).
    const timer = new Promise((resolve) => setTimeout(resolve, 2_000, 'timer'));
    assert.equal(await Promise.race([woken, timer]), 'woken');
  });
});

describe('Idempotency-Key', () => {
  let t: T;
  before(async () => {
    // Tokens outlive the clock moves of these tests.
    t = await notificationsApp({ HERALD_ACCESS_TTL: String(3 * 86400) });
  });
  after(() => t.close());

  it('returns the first notification with 200 for the same key and body', async () => {
    const first = await send(t.app, t.sender, email(), { 'idempotency-key': 'order-1' });
    assert.equal(first.statusCode, 201);
    // Same body with its keys in another order: the canonical hash matches.
    const reordered = Object.fromEntries(Object.entries(email()).reverse());
    t.clock.advance(60 * 60 * 1000);
    const again = await send(t.app, t.sender, reordered, { 'idempotency-key': 'order-1' });
    assert.equal(again.statusCode, 200);
    assert.deepEqual(again.json(), first.json());
    assert.equal(again.headers.location, first.headers.location);
    assert.equal(countRows(t.deps), 1);
  });

  it('answers 409 for the same key with a different body', async () => {
    const response = await send(t.app, t.sender, email({ priority: 'HIGH' }), {
      'idempotency-key': 'order-1',
    });
    assert.equal(response.statusCode, 409);
    assert.equal(response.json().code, 'IDEMPOTENCY_CONFLICT');
    assert.equal(countRows(t.deps), 1);
  });

  it('keeps keys per tenant', async () => {
    const response = await send(t.app, t.other, email(), { 'idempotency-key': 'order-1' });
    assert.equal(response.statusCode, 201);
  });

  it('settles concurrent requests with one key on one notification', async () => {
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => send(t.app, t.sender, sms(), { 'idempotency-key': 'race' })),
    );
    const statuses = responses.map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [200, 200, 200, 200, 201]);
    assert.equal(new Set(responses.map((r) => r.json().notificationId)).size, 1);
  });

  it('creates a new notification once the key is older than 24 hours', async () => {
    t.clock.advance(25 * 60 * 60 * 1000);
    const response = await send(t.app, t.sender, email(), { 'idempotency-key': 'order-1' });
    assert.equal(response.statusCode, 201);
  });

  it('refuses an unusable key', async () => {
    const response = await send(t.app, t.sender, email(), { 'idempotency-key': 'x'.repeat(300) });
    assert.equal(response.statusCode, 400);
  });
});
