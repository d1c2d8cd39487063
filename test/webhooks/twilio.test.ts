import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { App } from '../../src/http/types.ts';
import type { Store } from '../../src/store/port/index.ts';
import { record, seed } from '../store/reports.suite.ts';
import { PUBLIC_URL, signTwilio, webhookApp } from './harness.ts';

describe('POST /webhooks/twilio', () => {
  let app: App;
  let store: Store;
  before(async () => {
    ({ app, store } = await webhookApp());
  });
  after(() => app.close());

  const post = (form: Record<string, string>, signature?: string, url = '/webhooks/twilio') =>
    app.inject({
      method: 'POST',
      url,
      payload: new URLSearchParams(form).toString(),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(signature === undefined ? {} : { 'x-twilio-signature': signature }),
      },
    });
  const callback = (sid: string, status: string, extra: Record<string, string> = {}) => ({
    AccountSid: 'AC0123456789abcdef0123456789abcdef',
    MessageSid: sid,
    MessageStatus: status,
    To: '+15551234567',
    ...extra,
  });
  const statusOf = async (id: string) => (await store.notifications.get('t1', id))?.record.status;
  const eventsOf = async (id: string) => (await store.notifications.get('t1', id))?.events ?? [];

  it('marks the notification DELIVERED on a signed "delivered" callback', async () => {
    const id = await seed(store, 'SENT', 'twilio', 'SM0001');
    const form = callback('SM0001', 'delivered');
    const response = await post(form, signTwilio(`${PUBLIC_URL}/webhooks/twilio`, form));
    assert.equal(response.statusCode, 200);
    assert.equal(await statusOf(id), 'DELIVERED');
    const last = (await eventsOf(id)).at(-1);
    assert.equal(last?.type, 'DELIVERED');
    assert.equal(last?.source, 'webhook');
    assert.equal(last?.provider, 'twilio');
  });

  it('fails the notification on "undelivered" with the error code in the event', async () => {
    const id = await seed(store, 'SENT', 'twilio', 'SM0002');
    const form = callback('SM0002', 'undelivered', { ErrorCode: '30003' });
    await post(form, signTwilio(`${PUBLIC_URL}/webhooks/twilio`, form));
    assert.equal(await statusOf(id), 'FAILED');
    assert.match((await eventsOf(id)).at(-1)?.detail ?? '', /30003/);
  });

  it('answers a missing or wrong signature with 401 problem+json and changes nothing', async () => {
    const id = await seed(store, 'SENT', 'twilio', 'SM0003');
    const form = callback('SM0003', 'delivered');
    const missing = await post(form);
    assert.equal(missing.statusCode, 401);
    assert.match(missing.headers['content-type'] as string, /^application\/problem\+json/);
    assert.equal(missing.json().code, 'WEBHOOK_SIGNATURE_INVALID');
    const wrongKey = await post(form, signTwilio(`${PUBLIC_URL}/webhooks/twilio`, form, 'other-token'));
    assert.equal(wrongKey.statusCode, 401);
    const tampered = await post(
      { ...form, MessageStatus: 'failed' },
      signTwilio(`${PUBLIC_URL}/webhooks/twilio`, form),
    );
    assert.equal(tampered.statusCode, 401);
    // Signed for another URL (the signature covers HERALD_PUBLIC_URL + path).
    const otherUrl = await post(form, signTwilio('https://evil.example.com/webhooks/twilio', form));
    assert.equal(otherUrl.statusCode, 401);
    assert.equal(await statusOf(id), 'SENT');
    assert.equal((await eventsOf(id)).length, 0);
  });

  it('checks the signature over the query string too', async () => {
    const id = await seed(store, 'SENT', 'twilio', 'SM0004');
    const form = callback('SM0004', 'delivered');
    const url = '/webhooks/twilio?tag=a';
    assert.equal((await post(form, signTwilio(`${PUBLIC_URL}/webhooks/twilio`, form), url)).statusCode, 401);
    assert.equal((await post(form, signTwilio(`${PUBLIC_URL}${url}`, form), url)).statusCode, 200);
    assert.equal(await statusOf(id), 'DELIVERED');
  });

  it('keeps DELIVERED when an out-of-order "sent" arrives (a WEBHOOK event), and records a replay once', async () => {
    const id = await seed(store, 'SENT', 'twilio', 'SM0005');
    const delivered = callback('SM0005', 'delivered');
    const sent = callback('SM0005', 'sent');
    const url = `${PUBLIC_URL}/webhooks/twilio`;
    assert.equal((await post(delivered, signTwilio(url, delivered))).statusCode, 200);
    const replayed = await post(delivered, signTwilio(url, delivered));
    assert.deepEqual([replayed.statusCode, replayed.json().duplicate], [200, 1]);
    assert.equal((await post(sent, signTwilio(url, sent))).statusCode, 200);
    assert.equal((await post(sent, signTwilio(url, sent))).json().duplicate, 1);
    assert.equal(await statusOf(id), 'DELIVERED');
    assert.deepEqual(
      (await eventsOf(id)).map((e) => e.type),
      ['DELIVERED', 'WEBHOOK'],
    );
  });

  it('keeps a callback that beats the recorded message id and applies it when the id is recorded', async () => {
    const id = await seed(store, 'PROCESSING');
    const form = callback('SM0006', 'delivered');
    const response = await post(form, signTwilio(`${PUBLIC_URL}/webhooks/twilio`, form));
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().pending, 1);
    assert.equal(await statusOf(id), 'PROCESSING');
    await record(store, id, 'SENT', 'twilio', 'SM0006');
    await store.reports.applyPending('twilio', ['SM0006'], Date.UTC(2026, 0, 1, 0, 1));
    assert.equal(await statusOf(id), 'DELIVERED');
  });

  it('answers a signed callback without MessageSid with 400', async () => {
    const form = { MessageStatus: 'delivered' };
    const response = await post(form, signTwilio(`${PUBLIC_URL}/webhooks/twilio`, form));
    assert.equal(response.statusCode, 400);
  });

  it('refuses a JSON body with 415', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/webhooks/twilio',
      payload: '{}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.statusCode, 415);
  });

  it('answers an unknown provider with 404', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/webhooks/nexmo',
      payload: '{}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.statusCode, 404);
    assert.equal(response.json().code, 'NOT_FOUND');
  });
});
