import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { App } from '../../../src/http/types.ts';
import { createTwilioProvider } from '../../../src/providers/sms/index.ts';
import type { Provider, SendResult } from '../../../src/providers/types.ts';
import type { Store } from '../../../src/store/port/index.ts';
import { startTwilioPeer, type TwilioPeer } from '../../helpers/peers/twilio.ts';
import { record, seed } from '../../store/reports.suite.ts';
import { PUBLIC_URL, TWILIO_TOKEN, webhookApp } from '../../webhooks/harness.ts';
import { never, outgoing, providerDeps } from '../email/deps.ts';

const SID = 'AC0123456789abcdef0123456789abcdef';

function failure(result: SendResult) {
  assert.equal(result.ok, false, `expected a failure, got ${JSON.stringify(result)}`);
  return result as Extract<SendResult, { ok: false }>;
}

describe('Twilio provider', () => {
  let peer: TwilioPeer;
  let provider: Provider;
  let app: App;
  let store: Store;
  before(async () => {
    peer = await startTwilioPeer(SID, TWILIO_TOKEN);
    const config = { accountSid: SID, authToken: TWILIO_TOKEN, from: '+15550001111', apiBase: peer.apiBase };
    provider = createTwilioProvider(config, providerDeps({ HERALD_PUBLIC_URL: PUBLIC_URL }).deps);
    ({ app, store } = await webhookApp());
  });
  after(async () => {
    await peer.close();
    await app.close();
  });

  const sms = (to: string, id?: string) =>
    outgoing('sms', { phone: to }, { text: 'Your code is 123456' }, id);
  const postCallback = (callback: ReturnType<TwilioPeer['callback']>) =>
    app.inject({
      method: 'POST',
      url: callback.path,
      payload: new URLSearchParams(callback.form).toString(),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': callback.signature,
      },
    });

  it('posts a form with Basic auth and StatusCallback, and records the Message SID', async () => {
    const id = crypto.randomUUID();
    const result = await provider.send(sms('+15551234567', id), never);
    assert.ok(result.ok);
    assert.match(result.providerMessageId ?? '', /^SM[0-9a-f]{32}$/);
    const request = peer.requests.at(-1)!;
    assert.equal(request.authorization, `Basic ${Buffer.from(`${SID}:${TWILIO_TOKEN}`).toString('base64')}`);
    assert.deepEqual(request.form, {
      To: '+15551234567',
      From: '+15550001111',
      Body: 'Your code is 123456',
      StatusCallback: `${PUBLIC_URL}/webhooks/twilio`,
    });
    assert.equal(request.idempotencyToken, id);
  });

  for (const code of [21211, 21614, 21610]) {
    it(`fails permanently on error ${code}`, async () => {
      const to = `+1555${code}00`;
      peer.script(to, { status: 400, code, message: 'recipient problem' });
      const result = failure(await provider.send(sms(to), never));
      assert.equal(result.kind, 'permanent');
      assert.match(result.detail, new RegExp(String(code)));
    });
  }

  it('retries 20429 and HTTP 429 later, honouring Retry-After', async () => {
    peer.script('+15559990001', {
      status: 429,
      code: 20429,
      message: 'Too Many Requests',
      headers: { 'retry-after': '7' },
    });
    const throttled = failure(await provider.send(sms('+15559990001'), never));
    assert.equal(throttled.kind, 'transient');
    assert.equal(throttled.retryAfterMs, 7000);
    peer.script('+15559990002', { status: 429, message: 'slow down' });
    assert.equal(failure(await provider.send(sms('+15559990002'), never)).kind, 'transient');
  });

  it('retries a 5xx later, with its Retry-After date', async () => {
    const later = new Date(Date.now() + 60_000).toUTCString();
    peer.script('+15559990003', {
      status: 503,
      message: 'Service Unavailable',
      headers: { 'retry-after': later },
    });
    const result = failure(await provider.send(sms('+15559990003'), never));
    assert.equal(result.kind, 'transient');
    assert.ok((result.retryAfterMs ?? 0) > 30_000);
    peer.script('+15559990004', { status: 500, code: 20500, message: 'Internal Server Error' });
    assert.equal(failure(await provider.send(sms('+15559990004'), never)).kind, 'transient');
  });

  it('reports wrong credentials as a configuration error', async () => {
    const { deps, logged } = providerDeps({ HERALD_PUBLIC_URL: PUBLIC_URL });
    const wrong = createTwilioProvider(
      { accountSid: SID, authToken: 'not-the-token', from: '+15550001111', apiBase: peer.apiBase },
      deps,
    );
    const result = failure(await wrong.send(sms('+15551234567'), never));
    assert.equal(result.kind, 'config');
    assert.doesNotMatch(JSON.stringify(logged), /not-the-token/);
  });

  it('treats an unreachable API as transient', async () => {
    const dead = await startTwilioPeer(SID, TWILIO_TOKEN);
    await dead.close();
    const offline = createTwilioProvider(
      { accountSid: SID, authToken: TWILIO_TOKEN, from: '+15550001111', apiBase: dead.apiBase },
      providerDeps().deps,
    );
    assert.equal(failure(await offline.send(sms('+15551234567'), never)).kind, 'transient');
  });

  it('maps the status callback Twilio sends for the message onto the notification', async () => {
    const result = await provider.send(sms('+15551230001'), never);
    assert.ok(result.ok && result.providerMessageId);
    const id = await seed(store, 'SENT', 'twilio', result.providerMessageId);
    assert.equal((await postCallback(peer.callback(result.providerMessageId, 'sent'))).statusCode, 200);
    assert.equal((await postCallback(peer.callback(result.providerMessageId, 'delivered'))).statusCode, 200);
    // Replayed and out of order: changes nothing, and adds no event (the same report again).
    assert.equal((await postCallback(peer.callback(result.providerMessageId, 'sent'))).statusCode, 200);
    const found = await store.notifications.get('t1', id);
    assert.equal(found?.record.status, 'DELIVERED');
    assert.deepEqual(
      found?.events.map((e) => e.type),
      ['WEBHOOK', 'DELIVERED'],
    );
  });

  it('applies a callback that arrived before the SID was recorded', async () => {
    const result = await provider.send(sms('+15551230002'), never);
    assert.ok(result.ok && result.providerMessageId);
    const id = await seed(store, 'PROCESSING');
    const early = await postCallback(
      peer.callback(result.providerMessageId, 'undelivered', { ErrorCode: '30005' }),
    );
    assert.equal(early.json().pending, 1);
    await record(store, id, 'SENT', 'twilio', result.providerMessageId);
    await store.reports.applyPending('twilio', [result.providerMessageId], Date.now());
    assert.equal((await store.notifications.get('t1', id))?.record.status, 'FAILED');
  });
});
