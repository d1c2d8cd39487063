import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { App } from '../../src/http/types.ts';
import type { Store } from '../../src/store/port/index.ts';
import { record, seed } from '../store/reports.suite.ts';
import { signMailgun, webhookApp } from './harness.ts';

describe('POST /webhooks/mailgun', () => {
  let app: App;
  let store: Store;
  let clock: Awaited<ReturnType<typeof webhookApp>>['clock'];
  before(async () => {
    ({ app, store, clock } = await webhookApp());
  });
  after(() => app.close());

  const post = (body: unknown, contentType = 'application/json') =>
    app.inject({
      method: 'POST',
      url: '/webhooks/mailgun',
      payload: typeof body === 'string' ? body : JSON.stringify(body),
      headers: { 'content-type': contentType },
    });
  const webhook = (messageId: string, event: string, extra: Record<string, unknown> = {}) => ({
    signature: signMailgun(),
    'event-data': {
      event,
      timestamp: 1767225600.5,
      message: { headers: { 'message-id': messageId } },
      ...extra,
    },
  });
  const view = async (id: string) => (await store.notifications.get('t1', id))!;

  it('marks the notification DELIVERED on a signed "delivered" event', async () => {
    const id = await seed(store, 'SENT', 'smtp', 'm1@mail.example.com');
    const response = await post(webhook('m1@mail.example.com', 'delivered'));
    assert.equal(response.statusCode, 200);
    assert.equal((await view(id)).record.status, 'DELIVERED');
  });

  it('fails on a permanent failure and only records a temporary one', async () => {
    const temporary = await seed(store, 'SENT', 'smtp', 'm2@mail.example.com');
    const permanent = await seed(store, 'SENT', 'smtp', 'm3@mail.example.com');
    await post(webhook('m2@mail.example.com', 'failed', { severity: 'temporary' }));
    await post(
      webhook('m3@mail.example.com', 'failed', {
        severity: 'permanent',
        'delivery-status': { description: 'No such mailbox' },
      }),
    );
    assert.equal((await view(temporary)).record.status, 'SENT');
    assert.equal((await view(temporary)).events.at(-1)?.type, 'WEBHOOK');
    const failed = await view(permanent);
    assert.equal(failed.record.status, 'FAILED');
    assert.match(failed.events.at(-1)?.detail ?? '', /No such mailbox/);
  });

  it('answers a bad or missing signature with 401 and changes nothing', async () => {
    const id = await seed(store, 'SENT', 'smtp', 'm4@mail.example.com');
    const good = webhook('m4@mail.example.com', 'delivered');
    const wrong = { ...good, signature: signMailgun('b'.repeat(50), '1767225600', 'another-key') };
    const swapped = { ...good, signature: { ...good.signature, token: 'c'.repeat(50) } };
    const { signature: _dropped, ...unsigned } = good;
    for (const body of [wrong, swapped, unsigned]) {
      const response = await post(body);
      assert.equal(response.statusCode, 401);
      assert.equal(response.json().code, 'WEBHOOK_SIGNATURE_INVALID');
    }
    assert.equal((await view(id)).record.status, 'SENT');
    assert.equal((await view(id)).events.length, 0);
  });

  it('accepts the legacy form-encoded webhook', async () => {
    const id = await seed(store, 'SENT', 'smtp', 'm5@mail.example.com');
    const form = new URLSearchParams({
      ...signMailgun(),
      event: 'delivered',
      'Message-Id': '<m5@mail.example.com>',
    });
    const response = await post(form.toString(), 'application/x-www-form-urlencoded');
    assert.equal(response.statusCode, 200);
    assert.equal((await view(id)).record.status, 'DELIVERED');
  });

  it('answers malformed JSON with 400', async () => {
    const response = await post('{"signature": ');
    assert.equal(response.statusCode, 400);
  });

  it('applies an event that arrived before the message id once the id is recorded', async () => {
    const id = await seed(store, 'PROCESSING');
    const response = await post(webhook('m6@mail.example.com', 'delivered'));
    assert.equal(response.json().pending, 1);
    await record(store, id, 'SENT', 'smtp', 'm6@mail.example.com');
    assert.equal(await store.reports.applyPending('smtp', ['m6@mail.example.com'], Date.UTC(2026, 0, 2)), 1);
    assert.equal((await view(id)).record.status, 'DELIVERED');
  });

  it('refuses an old signed timestamp and a signature token used before, changing nothing', async () => {
    const id = await seed(store, 'SENT', 'smtp', 'm9@mail.example.com');
    const now = Math.floor(clock.now() / 1000);
    // A triple signed in 2001, as in the finding: valid HMAC, far too old.
    const old = {
      ...webhook('m9@mail.example.com', 'delivered'),
      signature: signMailgun(undefined, '978307200'),
    };
    const stale = await post(old);
    assert.equal(stale.statusCode, 401);
    assert.match(stale.json().detail, /5 minutes/);
    assert.equal(
      (await post({ ...old, signature: signMailgun(undefined, String(now + 301)) })).statusCode,
      401,
    );
    assert.equal((await view(id)).record.status, 'SENT');
    const fresh = webhook('m9@mail.example.com', 'delivered');
    assert.equal((await post(fresh)).statusCode, 200);
    const replayed = await post(fresh);
    assert.equal(replayed.statusCode, 401);
    assert.match(replayed.json().detail, /used before/);
    assert.deepEqual(
      (await view(id)).events.map((e) => e.type),
      ['DELIVERED'],
    );
    // The same event signed again with a new token (Mailgun's own retry) adds nothing either.
    const retried = await post(webhook('m9@mail.example.com', 'delivered'));
    assert.deepEqual([retried.statusCode, retried.json().duplicate], [200, 1]);
  });
});
