import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_TENANT } from '../../src/auth/principal.ts';
import { notificationId } from '../../src/notifications/ids.ts';
import { encodeNotification, type NewNotification } from '../../src/store/port/notifications.ts';
import { LIST_SCAN } from '../../src/store/port/scanned-page.ts';
import { devicePush, email, notificationsApp, send, sms, webPush } from './fixtures.ts';

type T = Awaited<ReturnType<typeof notificationsApp>>;

/** Moves a row as the scheduler would: its port is its own, so tests do it in SQL. */
function setState(t: T, id: string, status: string, queueState: string | null) {
  const db = (t.deps.store as unknown as { db: import('better-sqlite3').Database }).db;
  db.prepare('UPDATE notifications SET status = ?, queue_state = ? WHERE id = ?').run(status, queueState, id);
}

describe('GET /notifications/{id}', () => {
  let t: T;
  before(async () => {
    t = await notificationsApp();
  });
  after(() => t.close());

  const get = (id: string, headers: Record<string, string> = t.sender) =>
    t.app.inject({ method: 'GET', url: `/notifications/${id}`, headers });

  it('shows status, metadata and a first QUEUED event at createdAt', async () => {
    const accepted = (
      await send(t.app, t.sender, email({ metadata: { orderId: 'A-1', nested: { x: [1] } } }))
    ).json();
    const response = await get(accepted.notificationId);
    assert.equal(response.statusCode, 200);
    const body = response.json();
    assert.equal(body.notificationId, accepted.notificationId);
    assert.equal(body.status, 'QUEUED');
    assert.deepEqual(body.metadata, { orderId: 'A-1', nested: { x: [1] } });
    assert.equal(body.attempts, 0);
    assert.equal(body.nextAttemptAt, null);
    assert.deepEqual(body.events, [{ type: 'QUEUED', at: accepted.createdAt }]);
  });

  it('masks every kind of recipient', async () => {
    const cases: Array<[Record<string, unknown>, unknown]> = [
      [email({ recipient: { email: 'ada.lovelace@example.com' } }), { email: 'a***@example.com' }],
      [sms({ recipient: { phone: '+15550101234' } }), { phone: '+*******1234' }],
      [webPush(), { subscription: { endpoint: '***123456' } }],
      [devicePush(), { deviceToken: '***c9d0e1', platform: 'apns' }],
    ];
    for (const [body, masked] of cases) {
      if ((body.recipient as { deviceToken?: string }).deviceToken) {
        body.recipient = { deviceToken: 'a1b2c3d4e5f6a7b8c9d0e1', platform: 'apns' };
      }
      const id = (await send(t.app, t.sender, body)).json().notificationId;
      const response = await get(id);
      assert.deepEqual(response.json().recipient, masked);
      assert.doesNotMatch(response.body, /lovelace|0101|abcdef1|p256dh|tBHItJI5/);
    }
  });

  it('answers 304 to a matching If-None-Match and a new ETag after a change', async () => {
    const id = (await send(t.app, t.sender, sms())).json().notificationId;
    const first = await get(id);
    const etag = first.headers.etag as string;
    assert.match(etag, /^"[^"]+"$/);
    const cached = await get(id, { ...t.sender, 'if-none-match': etag });
    assert.equal(cached.statusCode, 304);
    assert.equal(cached.body, '');
    assert.equal(cached.headers.etag, etag);
    const listed = await get(id, { ...t.sender, 'if-none-match': `"other", W/${etag}` });
    assert.equal(listed.statusCode, 304);
    await t.app.inject({ method: 'POST', url: `/notifications/${id}/cancel`, headers: t.sender });
    const changed = await get(id, { ...t.sender, 'if-none-match': etag });
    assert.equal(changed.statusCode, 200);
    assert.notEqual(changed.headers.etag, etag);
  });

  it('answers 404 for another tenant’s notification exactly as for an unknown one', async () => {
    const id = (await send(t.app, t.sender, sms())).json().notificationId;
    const theirs = await get(id, t.other);
    const unknown = await get('019b0000-0000-7000-8000-000000000000', t.other);
    assert.equal(theirs.statusCode, 404);
    assert.equal(unknown.statusCode, 404);
    const strip = (body: Record<string, unknown>) => ({ ...body, detail: undefined });
    assert.deepEqual(strip(theirs.json()), strip(unknown.json()));
    assert.equal(theirs.json().detail, unknown.json().detail);
    assert.equal((await get('x'.repeat(90), t.other)).statusCode, 404);
  });

  it('needs the notifications:read scope', async () => {
    const id = (await send(t.app, t.sender, sms())).json().notificationId;
    const token = await import('../helpers/auth.ts').then((m) =>
      m.authHeader(t.deps, { scopes: ['notifications:send'] }),
    );
    assert.equal((await get(id, token)).statusCode, 403);
  });
});

describe('GET /notifications', () => {
  let t: T;
  const ids: string[] = [];
  before(async () => {
    t = await notificationsApp();
    // 7 notifications a minute apart: emails alternating LOW and HIGH, and one NORMAL sms (index 3).
    for (let i = 0; i < 7; i++) {
      const body = i === 3 ? sms() : email({ priority: i % 2 ? 'HIGH' : 'LOW' });
      ids.push((await send(t.app, t.sender, body)).json().notificationId);
      t.clock.advance(60_000);
    }
    await send(t.app, t.other, sms());
  });
  after(() => t.close());

  const list = (query: string) =>
    t.app.inject({ method: 'GET', url: `/notifications${query}`, headers: t.sender });

  it('lists the tenant’s notifications newest first, masked, without events', async () => {
    const body = (await list('')).json();
    assert.deepEqual(
      body.items.map((n: { notificationId: string }) => n.notificationId),
      [...ids].reverse(),
    );
    assert.equal(body.nextCursor, null);
    assert.equal(body.items[0].recipient.email, 'a***@example.com');
    assert.equal(body.items[0].events, undefined);
  });

  it('pages with an opaque cursor until nextCursor is null', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `?limit=3${cursor ? `&cursor=${cursor}` : ''}`;
      const body = (await list(query)).json();
      seen.push(...body.items.map((n: { notificationId: string }) => n.notificationId));
      cursor = body.nextCursor;
      pages += 1;
    } while (cursor);
    assert.equal(pages, 3);
    assert.deepEqual(seen, [...ids].reverse());
  });

  it('filters by priority, channel, status and creation time, also across pages', async () => {
    const high = (await list('?priority=HIGH')).json().items;
    assert.equal(high.length, 2);
    assert.ok(high.every((n: { priority: string }) => n.priority === 'HIGH'));
    const smsOnly = (await list('?channel=sms')).json().items;
    assert.deepEqual(
      smsOnly.map((n: { notificationId: string }) => n.notificationId),
      [ids[3]],
    );
    assert.equal((await list('?status=DELIVERED')).json().items.length, 0);
    assert.equal((await list('?status=QUEUED')).json().items.length, 7);
    const after = new Date(Date.UTC(2026, 0, 1, 0, 1, 30)).toISOString();
    const before = new Date(Date.UTC(2026, 0, 1, 0, 4, 30)).toISOString();
    const window = (await list(`?createdAfter=${after}&createdBefore=${before}`)).json().items;
    assert.deepEqual(
      window.map((n: { notificationId: string }) => n.notificationId),
      [ids[4], ids[3], ids[2]],
    );
    const first = (await list('?priority=LOW&limit=2')).json();
    const second = (await list(`?priority=LOW&limit=2&cursor=${first.nextCursor}`)).json();
    assert.deepEqual(
      [...first.items, ...second.items].map((n: { notificationId: string }) => n.notificationId),
      [ids[6], ids[4], ids[2], ids[0]],
    );
    assert.equal(second.nextCursor, null);
  });

  it('refuses bad filters, limits and cursors with 400', async () => {
    for (const query of [
      '?limit=0',
      '?limit=501',
      '?status=LOST',
      '?cursor=%%%',
      '?cursor=abc',
      '?createdAfter=soon',
      // Date.parse reads these as 2001, a host-local time and March 2nd.
      '?createdAfter=1',
      '?createdBefore=2026-11-27%2010:00',
      '?createdAfter=2026-02-30T00:00:00Z',
      '?sort=asc',
    ]) {
      const response = await list(query);
      assert.equal(response.statusCode, 400, query);
      assert.equal(response.json().code, 'VALIDATION_FAILED');
    }
  });

  it('takes a date alone as its midnight UTC', async () => {
    const all = (await list('')).json().items.length;
    assert.ok(all > 0);
    assert.equal((await list('?createdBefore=2026-01-02')).json().items.length, all);
    assert.equal((await list('?createdAfter=2026-01-02')).json().items.length, 0);
  });

  it('defaults to 50 items and allows up to 500', async () => {
    assert.equal((await list('?limit=500')).statusCode, 200);
  });
});

describe('GET /notifications over a long history', () => {
  let t: Awaited<ReturnType<typeof notificationsApp>>;
  const ids: string[] = [];
  before(async () => {
    t = await notificationsApp();
    // One SMS, then LIST_SCAN email: more than one read looks at.
    const rows = Array.from({ length: LIST_SCAN + 1 }, (_, i) => {
      const id = notificationId(Date.UTC(2026, 0, 1) + i);
      ids.push(id);
      return encodeNotification({
        id,
        tenant: DEFAULT_TENANT,
        channel: i === 0 ? 'sms' : 'email',
        priority: 'NORMAL',
        recipient: i === 0 ? { phone: '+15555550100' } : { email: 'ada@example.com' },
        templateKey: null,
        templateVersion: null,
        content: { subject: 's', text: 't' },
        variables: {},
        metadata: {},
        createdAt: Date.UTC(2026, 0, 1) + i,
      } as NewNotification);
    });
    await t.deps.store.notifications.insertMany(rows, 0);
  });
  after(() => t.close());

  it('answers a short page with a next cursor where a filter matched none of what one read looked at', async () => {
    const list = (query: string) =>
      t.app.inject({ method: 'GET', url: `/notifications${query}`, headers: t.sender });
    const first = (await list('?channel=sms')).json();
    assert.deepEqual(first.items, []);
    assert.equal(typeof first.nextCursor, 'string');
    const second = (await list(`?channel=sms&cursor=${first.nextCursor}`)).json();
    assert.deepEqual(
      second.items.map((n: { notificationId: string }) => n.notificationId),
      [ids[0]],
    );
    assert.equal(second.nextCursor, null);
  });
});

describe('cancel and redrive', () => {
  let t: T;
  before(async () => {
    t = await notificationsApp();
  });
  after(() => t.close());

  const post = (id: string, action: string, headers = t.sender) =>
    t.app.inject({ method: 'POST', url: `/notifications/${id}/${action}`, headers });

  it('cancels a queued notification, then answers 409', async () => {
    const id = (await send(t.app, t.sender, sms())).json().notificationId;
    const response = await post(id, 'cancel');
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().status, 'CANCELLED');
    assert.deepEqual(
      response.json().events.map((e: { type: string }) => e.type),
      ['QUEUED', 'CANCELLED'],
    );
    const again = await post(id, 'cancel');
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().code, 'INVALID_STATE');
  });

  it('cancels a scheduled or retrying one, but not one a worker holds or already sent', async () => {
    const scheduled = (await send(t.app, t.sender, sms({ scheduledAt: '2026-02-01T00:00:00Z' }))).json();
    assert.equal((await post(scheduled.notificationId, 'cancel')).statusCode, 200);
    const retrying = (await send(t.app, t.sender, sms())).json().notificationId;
    setState(t, retrying, 'RETRYING', 'waiting');
    assert.equal((await post(retrying, 'cancel')).statusCode, 200);
    for (const [status, queueState] of [
      ['PROCESSING', 'leased'],
      ['SENT', null],
      ['DELIVERED', null],
    ] as const) {
      const id = (await send(t.app, t.sender, sms())).json().notificationId;
      setState(t, id, status, queueState);
      const response = await post(id, 'cancel');
      assert.equal(response.statusCode, 409, status);
    }
  });

  it('refuses a cancel that carries fields with 400 and cancels nothing; {} and no body are fine', async () => {
    const id = (await send(t.app, t.sender, sms())).json().notificationId;
    const withFields = await t.app.inject({
      method: 'POST',
      url: `/notifications/${id}/cancel`,
      headers: t.sender,
      payload: { reason: 'changed my mind' },
    });
    assert.equal(withFields.statusCode, 400);
    assert.equal(withFields.json().code, 'VALIDATION_FAILED');
    const status = await t.app.inject({ method: 'GET', url: `/notifications/${id}`, headers: t.sender });
    assert.equal(status.json().status, 'QUEUED');
    const empty = await t.app.inject({
      method: 'POST',
      url: `/notifications/${id}/cancel`,
      headers: t.sender,
      payload: {},
    });
    assert.equal(empty.statusCode, 200);
  });

  it('answers 404 when cancelling another tenant’s notification', async () => {
    const id = (await send(t.app, t.sender, sms())).json().notificationId;
    assert.equal((await post(id, 'cancel', t.other)).statusCode, 404);
  });

  it('redrives only a FAILED notification, keeping its events, with the admin scope', async () => {
    const id = (await send(t.app, t.sender, sms())).json().notificationId;
    assert.equal((await post(id, 'retry', t.admin)).statusCode, 409);
    setState(t, id, 'FAILED', null);
    assert.equal((await post(id, 'retry', t.sender)).statusCode, 403);
    assert.equal((await post(id, 'retry', t.other)).statusCode, 404);
    const woken = t.deps.worker.wakeup.wait(60_000);
    const response = await post(id, 'retry', t.admin);
    assert.equal(response.statusCode, 200);
    await woken;
    const body = response.json();
    assert.equal(body.status, 'QUEUED');
    assert.equal(body.attempts, 0);
    assert.deepEqual(
      body.events.map((e: { type: string; detail?: string }) => [e.type, e.detail]),
      [
        ['QUEUED', undefined],
        ['QUEUED', 'redrive'],
      ],
    );
  });
});

describe('GET /notifications/{id}/message', () => {
  let t: T;
  before(async () => {
    t = await notificationsApp();
  });
  after(() => t.close());

  const message = (id: string, headers: Record<string, string>) =>
    t.app.inject({ method: 'GET', url: `/notifications/${id}/message`, headers });

  it("renders a notification's message for admins only, within their tenant", async () => {
    const id = (
      await send(
        t.app,
        t.sender,
        email({
          content: { subject: 'Hi {{ name }}', text: 'Code {{ code }}' },
          variables: { name: 'Ada', code: 42 },
        }),
      )
    ).json().notificationId;
    const answer = await message(id, t.admin);
    assert.equal(answer.statusCode, 200, answer.body);
    assert.deepEqual(answer.json(), {
      notificationId: id,
      channel: 'email',
      source: 'rendered',
      content: { subject: 'Hi Ada', text: 'Code 42' },
    });
    assert.equal((await message(id, t.sender)).statusCode, 403);
    assert.equal((await message(id, t.viewer)).statusCode, 403);
    assert.equal((await message(id, t.other)).statusCode, 404);
  });
});
