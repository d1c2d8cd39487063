// GET /admin/history (issue #49 item 12): delivered, failed and skipped per channel over the
// last hour (minute buckets) and the last 7 days (hour buckets), admins only, each tenant's own
// unless the caller is an operator.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SendResult } from '../../src/providers/types.ts';
import { drain, schedulerFor, scriptedProvider } from '../dispatch/harness.ts';
import { authHeader } from '../helpers/auth.ts';
import { email, notificationsApp, send, sms } from './fixtures.ts';

type AppEnv = Awaited<ReturnType<typeof notificationsApp>>;
interface Bucket {
  start: string;
  delivered: number;
  failed: number;
  skipped: number;
}
interface History {
  window: string;
  bucketSeconds: number;
  from: string;
  to: string;
  channels: Array<{ channel: string; buckets: Bucket[] }>;
}

describe('GET /admin/history', () => {
  let t: AppEnv;
  /** When the deliveries below were completed. */
  let doneAt: number;
  before(async () => {
    t = await notificationsApp();
    // Tenant default: two emails delivered, one refused for good, one SMS to a suppressed number.
    await send(t.app, t.admin, email());
    await send(t.app, t.admin, email());
    await send(t.app, t.admin, email({ recipient: { email: 'nobody@example.com' } }));
    const stopped = await t.app.inject({
      method: 'POST',
      url: '/suppressions',
      headers: t.admin,
      payload: { channel: 'sms', recipient: '+15550101234', reason: 'asked to stop' },
    });
    assert.equal(stopped.statusCode, 201, stopped.body);
    await send(t.app, t.admin, sms());
    // Tenant other: one SMS delivered.
    await send(t.app, t.other, sms({ recipient: { phone: '+15550109999' } }));
    const answer = (to: string): SendResult =>
      to.includes('nobody') ? { ok: false, kind: 'permanent', detail: '550 no such user' } : { ok: true };
    const scheduler = schedulerFor(
      { config: t.deps.config, store: t.deps.store, clock: t.clock },
      {
        factories: [
          () => scriptedProvider('email', (m) => answer(JSON.stringify(m.recipient))),
          () => scriptedProvider('sms', () => ({ ok: true })),
        ],
      },
    );
    await drain(scheduler);
    doneAt = t.clock.now();
  });
  after(() => t.close());

  const get = (query: string, headers: Record<string, string> = t.admin) =>
    t.app.inject({ method: 'GET', url: `/admin/history${query}`, headers });
  /** The totals of each channel over the window. */
  const totals = (body: History) =>
    Object.fromEntries(
      body.channels.map((c) => [
        c.channel,
        c.buckets.reduce(
          ([d, f, s], b): [number, number, number] => [d + b.delivered, f + b.failed, s + b.skipped],
          [0, 0, 0] as [number, number, number],
        ),
      ]),
    );

  it('answers the last hour in 60 minute buckets per channel, with their start times', async () => {
    const response = await get('?window=1h');
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json() as History;
    assert.equal(body.window, '1h');
    assert.equal(body.bucketSeconds, 60);
    assert.deepEqual(
      body.channels.map((c) => [c.channel, c.buckets.length]),
      [
        ['email', 60],
        ['sms', 60],
        ['push', 60],
        ['inapp', 60],
      ],
    );
    const minute = doneAt - (doneAt % 60_000);
    const email = body.channels[0]?.buckets ?? [];
    assert.equal(
      email.at(-1)?.start,
      new Date(minute).toISOString(),
      'the newest bucket is the current minute',
    );
    assert.equal(email[0]?.start, new Date(minute - 59 * 60_000).toISOString());
    assert.equal(body.from, email[0]?.start);
    assert.equal(body.to, new Date(minute + 60_000).toISOString());
    assert.deepEqual(email.at(-1), { start: email.at(-1)?.start, delivered: 2, failed: 1, skipped: 0 });
    // The operator sees every tenant's: tenant other's SMS too.
    assert.deepEqual(totals(body), { email: [2, 1, 0], sms: [1, 0, 1], push: [0, 0, 0], inapp: [0, 0, 0] });
  });

  it('answers the last 7 days in 168 hour buckets, the last hour by default', async () => {
    const week = (await get('?window=7d')).json() as History;
    assert.equal(week.bucketSeconds, 3600);
    assert.equal(week.channels[0]?.buckets.length, 168);
    const hour = doneAt - (doneAt % 3_600_000);
    assert.equal(week.channels[0]?.buckets.at(-1)?.start, new Date(hour).toISOString());
    assert.deepEqual(totals(week), { email: [2, 1, 0], sms: [1, 0, 1], push: [0, 0, 0], inapp: [0, 0, 0] });
    assert.equal(((await get('')).json() as History).window, '1h');
  });

  it("shows another tenant's admin only its own tenant's", async () => {
    const mine = (await get('?window=7d', t.other)).json() as History;
    assert.deepEqual(totals(mine), { email: [0, 0, 0], sms: [1, 0, 0], push: [0, 0, 0], inapp: [0, 0, 0] });
  });

  it('refuses callers without the admin scope', async () => {
    for (const headers of [t.sender, t.viewer]) {
      const response = await get('?window=1h', headers);
      assert.equal(response.statusCode, 403);
      assert.equal(response.json().code, 'FORBIDDEN');
    }
    assert.equal((await get('?window=1h', {})).statusCode, 401);
  });

  it('refuses an unknown window or parameter with a 400 naming it', async () => {
    for (const query of ['?window=24h', '?window=', '?since=0']) {
      const response = await get(query);
      assert.equal(response.statusCode, 400, query);
      assert.match(response.headers['content-type'] as string, /application\/problem\+json/);
      const problem = response.json();
      assert.equal(problem.code, 'VALIDATION_FAILED');
      assert.ok(problem.errors.length > 0, query);
    }
  });
  // Last: the tokens expire meanwhile.
  it('moves the window on: an hour later the last hour is empty, the 7 days are not', async () => {
    t.clock.advance(61 * 60_000);
    const admin = await authHeader(t.deps, { role: 'admin' });
    assert.deepEqual(totals((await get('?window=1h', admin)).json()), {
      email: [0, 0, 0],
      sms: [0, 0, 0],
      push: [0, 0, 0],
      inapp: [0, 0, 0],
    });
    assert.deepEqual(totals((await get('?window=7d', admin)).json()), {
      email: [2, 1, 0],
      sms: [1, 0, 1],
      push: [0, 0, 0],
      inapp: [0, 0, 0],
    });
  });
});
