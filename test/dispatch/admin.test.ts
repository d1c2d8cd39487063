import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runQueues } from '../../src/cli/queues.ts';
import type { SendResult } from '../../src/providers/types.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';
import { devicePush, email, notificationsApp, send, sms } from '../notifications/fixtures.ts';
import { schedulerFor, scriptedProvider, tick } from './harness.ts';

type AppEnv = Awaited<ReturnType<typeof notificationsApp>>;

describe('queue administration', () => {
  let t: AppEnv;
  before(async () => {
    t = await notificationsApp();
  });
  after(() => t.close());
  const env = () => ({ config: t.deps.config, store: t.deps.store, clock: t.clock });
  const queues = async (headers = t.admin) => t.app.inject({ method: 'GET', url: '/admin/queues', headers });
  const post = (action: string, payload?: object, headers = t.admin) =>
    t.app.inject({ method: 'POST', url: `/admin/queues/${action}`, headers, payload });

  it('shows the 16 priority and channel queues, empty ones with a null oldest age', async () => {
    const response = await queues();
    assert.equal(response.statusCode, 200);
    const rows = response.json().queues;
    assert.equal(rows.length, 16);
    assert.deepEqual(rows[0], {
      priority: 'CRITICAL',
      channel: 'email',
      depth: 0,
      oldestAgeMs: null,
      scheduled: 0,
      oldestDueAgeMs: null,
      inFlight: 0,
      paused: false,
    });
    assert.deepEqual(
      rows.map((r: { priority: string; channel: string }) => `${r.priority}/${r.channel}`).slice(0, 4),
      ['CRITICAL/email', 'CRITICAL/sms', 'CRITICAL/push', 'CRITICAL/inapp'],
    );
  });

  it('counts depth, oldest age and in-flight sends', async () => {
    await send(t.app, t.admin, email({ priority: 'HIGH' }));
    t.clock.advance(1500);
    await send(t.app, t.admin, email({ priority: 'HIGH' }));
    await send(
      t.app,
      t.admin,
      email({ priority: 'HIGH', scheduledAt: new Date(t.clock.now() + 60_000).toISOString() }),
    );
    let row = (await queues())
      .json()
      .queues.find(
        (q: { priority: string; channel: string }) => q.priority === 'HIGH' && q.channel === 'email',
      );
    assert.equal(row.depth, 3, 'scheduled ones count too');
    assert.equal(row.oldestAgeMs, 1500);
    const hang = scriptedProvider('email', () => new Promise<SendResult>(() => {}));
    const scheduler = schedulerFor(env(), { factories: [() => hang] });
    await scheduler.step();
    row = (await queues())
      .json()
      .queues.find(
        (q: { priority: string; channel: string }) => q.priority === 'HIGH' && q.channel === 'email',
      );
    assert.deepEqual([row.depth, row.inFlight], [1, 2]);
  });

  it('shows scheduled work apart from due work: a notification for 2030 is not the oldest waiting', async () => {
    const low = (q: { priority: string; channel: string }) => q.priority === 'LOW' && q.channel === 'sms';
    await send(t.app, t.admin, sms({ priority: 'LOW', scheduledAt: '2030-01-01T00:00:00Z' }));
    t.clock.advance(90_000);
    let row = (await queues()).json().queues.find(low);
    assert.deepEqual([row.depth, row.scheduled, row.oldestDueAgeMs], [1, 1, null]);
    assert.equal(row.oldestAgeMs, 90_000, 'oldestAgeMs keeps its contract: every waiting row');
    t.clock.advance(1000);
    await send(t.app, t.admin, sms({ priority: 'LOW' }));
    t.clock.advance(2000);
    row = (await queues()).json().queues.find(low);
    assert.deepEqual([row.depth, row.scheduled, row.oldestDueAgeMs], [2, 1, 2000]);
  });

  it('pauses and resumes a priority; held notifications show a THROTTLED event', async () => {
    const paused = await post('pause', { priority: 'LOW' });
    assert.equal(paused.statusCode, 200);
    const flags = paused.json().queues.filter((q: { paused: boolean }) => q.paused);
    assert.deepEqual(
      flags.map((q: { priority: string; channel: string }) => `${q.priority}/${q.channel}`),
      ['LOW/email', 'LOW/sms', 'LOW/push', 'LOW/inapp'],
    );
    const low = (await send(t.app, t.admin, sms({ priority: 'LOW' }))).json().notificationId;
    const normal = (await send(t.app, t.admin, sms({ priority: 'NORMAL' }))).json().notificationId;
    const scheduler = schedulerFor(env());
    await tick(scheduler);
    const status = async (id: string) =>
      (await t.app.inject({ method: 'GET', url: `/notifications/${id}`, headers: t.admin })).json();
    assert.equal((await status(normal)).status, 'DELIVERED');
    assert.equal((await status(low)).status, 'QUEUED');
    const resumed = await post('resume', { priority: 'LOW', channel: 'sms' });
    assert.equal(resumed.json().queues.filter((q: { paused: boolean }) => q.paused).length, 3);
    t.clock.advance(10);
    await tick(scheduler);
    const view = await status(low);
    assert.equal(view.status, 'DELIVERED');
    const types = view.events.map((e: { type: string }) => e.type);
    assert.deepEqual(types, ['QUEUED', 'THROTTLED', 'PROCESSING', 'SENT', 'DELIVERED']);
    const all = await post('resume');
    assert.equal(all.statusCode, 200, all.body);
    assert.equal((await queues()).json().queues.filter((q: { paused: boolean }) => q.paused).length, 0);
  });

  it('refuses callers without the admin scope and bodies with unknown fields', async () => {
    assert.equal((await queues(t.sender)).statusCode, 403);
    assert.equal((await post('pause', {}, t.sender)).statusCode, 403);
    assert.equal((await post('pause', { priority: 'URGENT' })).statusCode, 400);
    assert.equal((await post('pause', { queue: 'x' })).statusCode, 400);
    // Another tenant's admin may look but not stop the queues every tenant shares.
    assert.equal((await queues(t.other)).statusCode, 200);
    const refused = await post('pause', { priority: 'LOW' }, t.other);
    assert.equal(refused.statusCode, 403);
    assert.match(refused.json().detail, /only callers of tenant "default"/);
    assert.equal((await queues()).json().queues.filter((q: { paused: boolean }) => q.paused).length, 0);
    assert.equal((await t.app.inject({ method: 'GET', url: '/admin/queues' })).statusCode, 401);
  });

  it("shows another tenant's admin its own notifications only, and not the metrics of every tenant", async () => {
    const row = async (headers: typeof t.admin) =>
      (await queues(headers))
        .json()
        .queues.find(
          (q: { priority: string; channel: string }) => q.priority === 'LOW' && q.channel === 'push',
        );
    const before = { mine: await row(t.admin), theirs: await row(t.other) };
    await send(t.app, t.admin, devicePush({ priority: 'LOW' }));
    await send(t.app, t.admin, devicePush({ priority: 'LOW' }));
    t.clock.advance(1000);
    await send(t.app, t.other, devicePush({ priority: 'LOW' }));
    const all = await row(t.admin);
    const theirs = await row(t.other);
    assert.equal(all.depth - before.mine.depth, 3, "an operator counts every tenant's");
    assert.equal(theirs.depth - before.theirs.depth, 1);
    assert.equal(theirs.oldestAgeMs, 0, 'its own oldest, not the operator-visible one a second older');
    for (const url of ['/metrics', '/metrics/cluster']) {
      const other = await t.app.inject({ method: 'GET', url, headers: t.other });
      assert.equal(other.statusCode, 403, url);
      assert.equal(other.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.equal((await t.app.inject({ method: 'GET', url, headers: t.admin })).statusCode, 200, url);
    }
  });

  it('lists sandbox messages newest first, masked, paginated and per tenant', async () => {
    const headers = await t.admin;
    for (let i = 0; i < 3; i++) await send(t.app, headers, sms({ content: { text: `code ${i}` } }));
    const scheduler = schedulerFor(env());
    await tick(scheduler);
    // Delivered after the others (tenants are claimed in turn, so it would go second).
    await send(t.app, t.other, sms({ content: { text: 'other tenant' } }));
    await tick(scheduler);
    const first = await t.app.inject({
      method: 'GET',
      url: '/admin/sandbox?limit=2&channel=sms',
      headers: t.other,
    });
    assert.equal(first.statusCode, 200);
    assert.deepEqual(
      first.json().items.map((m: { content: { text: string } }) => m.content.text),
      ['other tenant'],
    );
    assert.equal(first.json().nextCursor, null);
    // Admins of tenant `default` see every tenant's messages.
    const page1 = (
      await t.app.inject({ method: 'GET', url: '/admin/sandbox?limit=2&channel=sms', headers })
    ).json();
    assert.deepEqual(
      page1.items.map((m: { content: { text: string } }) => m.content.text),
      ['other tenant', 'code 2'],
    );
    const item = page1.items[1];
    assert.deepEqual(Object.keys(item).sort(), ['at', 'channel', 'content', 'notificationId', 'recipient']);
    assert.equal(item.recipient.phone, '+*******1234');
    const page2 = (
      await t.app.inject({
        method: 'GET',
        url: `/admin/sandbox?limit=2&channel=sms&cursor=${page1.nextCursor}`,
        headers,
      })
    ).json();
    assert.deepEqual(
      page2.items.map((m: { content: { text: string } }) => m.content.text),
      ['code 1', 'code 0'],
    );
    const bad = await t.app.inject({ method: 'GET', url: '/admin/sandbox?cursor=nope', headers });
    assert.equal(bad.statusCode, 400);
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/admin/sandbox', headers: t.sender })).statusCode,
      403,
    );
  });
});

describe('herald queues (CLI)', () => {
  it('pauses and resumes through the database that the workers read', async () => {
    const dir = tempDir();
    const env = { HERALD_DATA_DIR: dir, LOG_LEVEL: 'silent' };
    const log = console.log;
    console.log = () => {};
    try {
      assert.equal(await runQueues(['pause', '--priority', 'low', '--channel', 'sms'], env), 0);
      assert.equal(await runQueues(['pause', '--channel', 'push'], env), 0);
      assert.equal(await runQueues(['resume', '--priority', 'LOW'], env), 0);
      assert.equal(await runQueues(['pause', '--priority', 'SOON'], env), 2);
    } finally {
      console.log = log;
    }
    const store = createSqliteStore(dir);
    const paused = (await store.queue.stats())
      .filter((q) => q.paused)
      .map((q) => `${q.priority}/${q.channel}`);
    await store.close();
    assert.deepEqual(paused, ['0/push', '1/push', '2/push']);
  });
});
