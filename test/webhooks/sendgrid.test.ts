import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { App } from '../../src/http/types.ts';
import type { Store } from '../../src/store/port/index.ts';
import { seed } from '../store/reports.suite.ts';
import { signSendgrid, webhookApp } from './harness.ts';

describe('POST /webhooks/sendgrid', () => {
  let app: App;
  let store: Store;
  let key: KeyObject;
  let clock: Awaited<ReturnType<typeof webhookApp>>['clock'];
  before(async () => {
    ({ app, store, sendgridKey: key, clock } = await webhookApp());
  });
  after(() => app.close());

  const post = (body: string, headers: Record<string, string>) =>
    app.inject({
      method: 'POST',
      url: '/webhooks/sendgrid',
      payload: body,
      headers: { 'content-type': 'application/json', ...headers },
    });
  const event = (messageId: string, type: string, extra: Record<string, unknown> = {}) => ({
    email: 'ada@example.com',
    timestamp: 1767225600,
    'smtp-id': `<${messageId}>`,
    event: type,
    sg_message_id: 'sg.1',
    ...extra,
  });
  const view = async (id: string) => (await store.notifications.get('t1', id))!;

  it('applies every event of a signed batch to its notification by Message-ID', async () => {
    const delivered = await seed(store, 'SENT', 'smtp', 'n1@mail.example.com');
    const bounced = await seed(store, 'SENT', 'smtp', 'n2@mail.example.com');
    const body = JSON.stringify([
      event('n1@mail.example.com', 'processed'),
      event('n1@mail.example.com', 'delivered', { response: '250 OK' }),
      event('n2@mail.example.com', 'bounce', { reason: '550 5.1.1 no such user' }),
    ]);
    const response = await post(body, signSendgrid(key, body));
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), {
      applied: 2,
      unchanged: 1,
      pending: 0,
      duplicate: 0,
      dropped: 0,
      ignored: 0,
    });
    assert.equal((await view(delivered)).record.status, 'DELIVERED');
    const failed = await view(bounced);
    assert.equal(failed.record.status, 'FAILED');
    assert.match(failed.events.at(-1)?.detail ?? '', /sendgrid bounce: 550 5\.1\.1/);
  });

  it('matches an event without smtp-id by the herald_message_id custom arg', async () => {
    const id = await seed(store, 'SENT', 'smtp', 'n3@mail.example.com');
    const body = JSON.stringify([
      { event: 'open', timestamp: 1767225600, herald_message_id: 'n3@mail.example.com' },
    ]);
    assert.equal((await post(body, signSendgrid(key, body))).statusCode, 200);
    assert.equal((await view(id)).record.status, 'DELIVERED');
  });

  it('answers a bad, missing or foreign signature with 401 and changes nothing', async () => {
    const id = await seed(store, 'SENT', 'smtp', 'n4@mail.example.com');
    const body = JSON.stringify([event('n4@mail.example.com', 'delivered')]);
    const headers = signSendgrid(key, body);
    assert.equal((await post(body, {})).statusCode, 401);
    const otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    assert.equal((await post(body, signSendgrid(otherKey, body))).statusCode, 401);
    // The timestamp is signed too.
    const moved = { ...headers, 'x-twilio-email-event-webhook-timestamp': '1767225601' };
    assert.equal((await post(body, moved)).statusCode, 401);
    // One byte changed (whitespace) breaks the raw-body signature.
    assert.equal((await post(`${body} `, headers)).statusCode, 401);
    const garbage = { ...headers, 'x-twilio-email-event-webhook-signature': 'bm90IGEgc2lnbmF0dXJl' };
    const response = await post(body, garbage);
    assert.equal(response.statusCode, 401);
    assert.equal(response.json().code, 'WEBHOOK_SIGNATURE_INVALID');
    const { record, events } = await view(id);
    assert.equal(record.status, 'SENT');
    assert.equal(events.length, 0);
  });

  it('answers malformed JSON with 400', async () => {
    const body = '[{"event": ';
    const response = await post(body, signSendgrid(key, body));
    assert.equal(response.statusCode, 400);
    assert.equal(response.json().code, 'MALFORMED_BODY');
  });

  it('accepts a batch larger than the API body limit (SendGrid posts up to thousands of events)', async () => {
    const id = await seed(store, 'SENT', 'smtp', 'n6@mail.example.com');
    const filler = Array.from({ length: 800 }, (_, i) => event(`other-${i}@mail.example.com`, 'processed'));
    const body = JSON.stringify([...filler, event('n6@mail.example.com', 'delivered')]);
    assert.ok(body.length > 64 * 1024);
    const response = await post(body, signSendgrid(key, body));
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().pending, 800);
    assert.equal((await view(id)).record.status, 'DELIVERED');
  });

  it('keeps a late "deferred" after delivery as a WEBHOOK event', async () => {
    const id = await seed(store, 'SENT', 'smtp', 'n5@mail.example.com');
    const first = JSON.stringify([event('n5@mail.example.com', 'delivered')]);
    const late = JSON.stringify([event('n5@mail.example.com', 'deferred')]);
    await post(first, signSendgrid(key, first));
    await post(late, signSendgrid(key, late));
    const { record, events } = await view(id);
    assert.equal(record.status, 'DELIVERED');
    assert.deepEqual(
      events.map((e) => e.type),
      ['DELIVERED', 'WEBHOOK'],
    );
  });

  it('refuses a report signed more than 5 minutes from now, changing nothing', async () => {
    const id = await seed(store, 'SENT', 'smtp', 'n9@mail.example.com');
    const body = JSON.stringify([event('n9@mail.example.com', 'delivered')]);
    const now = Math.floor(clock.now() / 1000);
    for (const timestamp of [String(now - 301), String(now + 301), '978307200']) {
      const response = await post(body, signSendgrid(key, body, timestamp));
      assert.equal(response.statusCode, 401, timestamp);
      assert.equal(response.json().code, 'WEBHOOK_SIGNATURE_INVALID');
    }
    assert.equal((await view(id)).record.status, 'SENT');
    assert.equal((await post(body, signSendgrid(key, body, String(now - 299)))).statusCode, 200);
    assert.equal((await view(id)).record.status, 'DELIVERED');
  });

  it('records the same report delivered again (a retry, a replay) once', async () => {
    const id = await seed(store, 'SENT', 'smtp', 'n10@mail.example.com');
    const body = JSON.stringify([
      event('n10@mail.example.com', 'open'),
      event('n10@mail.example.com', 'open'),
    ]);
    const first = await post(body, signSendgrid(key, body));
    assert.deepEqual([first.json().applied, first.json().duplicate], [1, 1]);
    const again = await post(body, signSendgrid(key, body));
    assert.deepEqual([again.json().applied, again.json().duplicate], [0, 2]);
    const later = JSON.stringify([event('n10@mail.example.com', 'open', { timestamp: 1767225700 })]);
    assert.equal(
      (await post(later, signSendgrid(key, later))).json().unchanged,
      1,
      'another open is another report',
    );
    assert.deepEqual(
      (await view(id)).events.map((e) => e.type),
      ['DELIVERED', 'WEBHOOK'],
    );
  });
});
