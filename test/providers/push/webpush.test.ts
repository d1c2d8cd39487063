import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { after, before, describe, it } from 'node:test';
import webpush from 'web-push';
import { systemClock } from '../../../src/clock.ts';
import { isPrivateAddress, refusedUrl } from '../../../src/providers/outbound.ts';
import { createWebPushProvider, topicOf } from '../../../src/providers/push/webpush.ts';
import type { Provider } from '../../../src/providers/types.ts';
import { startWebPushPeer, type WebPushPeer } from '../../helpers/peers/webpush.ts';
import { never, pushDeps, pushMessage } from './factories.ts';

describe('Web Push provider against a local push service', () => {
  const vapid = webpush.generateVAPIDKeys();
  const config = {
    publicKey: vapid.publicKey,
    privateKey: vapid.privateKey,
    subject: 'mailto:ops@example.com',
  };
  let peer: WebPushPeer;
  let provider: Provider;

  before(async () => {
    peer = await startWebPushPeer();
    provider = createWebPushProvider(config, pushDeps(systemClock, peer.origin));
  });
  after(() => peer.close());

  const send = (
    subscription: ReturnType<WebPushPeer['subscribe']>,
    priority: 'HIGH' | 'NORMAL' = 'NORMAL',
  ) => {
    const message = pushMessage({ recipient: { subscription }, priority });
    return provider.send(message, never).then((result) => ({ result, message }));
  };

  it('accepts only web subscriptions', () => {
    assert.equal(provider.accepts({ subscription: peer.subscribe(vapid.publicKey) }), true);
    assert.equal(provider.accepts({ deviceToken: 'abc', platform: 'apns' }), false);
  });

  it('delivers an encrypted payload the push service can decrypt, signed with VAPID', async () => {
    const subscription = peer.subscribe(vapid.publicKey);
    const { result, message } = await send(subscription, 'HIGH');
    assert.equal(result.ok, true);
    assert.ok(result.ok && result.providerMessageId?.startsWith(`${peer.origin}/message/`));
    const received = peer.received.at(-1);
    assert.ok(received);
    assert.deepEqual(JSON.parse(received.plaintext), {
      notificationId: message.notificationId,
      title: 'Build finished',
      body: 'All 42 checks passed',
      data: { build: 42 },
    });
    assert.equal(received.claims.aud, peer.origin);
    assert.equal(received.claims.sub, 'mailto:ops@example.com');
    assert.equal(received.headers.urgency, 'high');
    assert.ok(Number(received.headers.ttl) > 0);
    assert.equal(received.headers.topic, topicOf(message.notificationId));
    assert.equal(received.headers.topic, message.notificationId.replace(/-/g, ''));
  });

  it('sends NORMAL priority with normal urgency', async () => {
    await send(peer.subscribe(vapid.publicKey), 'NORMAL');
    assert.equal(peer.received.at(-1)?.headers.urgency, 'normal');
  });

  for (const status of [404, 410]) {
    it(`fails permanently on ${status} and reports the subscription as unregistered`, async () => {
      const subscription = peer.subscribe(vapid.publicKey);
      peer.script(subscription.endpoint, { status, body: 'subscription expired' });
      const { result } = await send(subscription);
      assert.equal(result.ok, false);
      assert.ok(!result.ok && result.kind === 'permanent' && result.suppress === 'unregistered');
    });
  }

  it('retries later on 429, honouring Retry-After', async () => {
    const subscription = peer.subscribe(vapid.publicKey);
    peer.script(subscription.endpoint, { status: 429, headers: { 'retry-after': '17' } });
    const { result } = await send(subscription);
    assert.deepEqual(
      { ok: result.ok, kind: !result.ok && result.kind, retry: !result.ok && result.retryAfterMs },
      { ok: false, kind: 'transient', retry: 17_000 },
    );
  });

  for (const status of [500, 502, 503]) {
    it(`treats ${status} as transient`, async () => {
      const subscription = peer.subscribe(vapid.publicKey);
      peer.script(subscription.endpoint, { status });
      const { result } = await send(subscription);
      assert.ok(!result.ok && result.kind === 'transient' && result.suppress === undefined);
    });
  }

  it('fails permanently on 413 without dropping the subscription', async () => {
    const subscription = peer.subscribe(vapid.publicKey);
    peer.script(subscription.endpoint, { status: 413 });
    const { result } = await send(subscription);
    assert.ok(!result.ok && result.kind === 'permanent' && result.suppress === undefined);
  });

  it('fails permanently for a subscription made for another VAPID key', async () => {
    const other = webpush.generateVAPIDKeys();
    const { result } = await send(peer.subscribe(other.publicKey));
    assert.ok(!result.ok && result.kind === 'permanent');
    assert.match(peer.refused.at(-1)?.reason ?? '', /differs/);
  });

  it('fails only that notification when the push service refuses the VAPID signature (401), quoting none of its answer', async () => {
    // The public key announced in `k` does not match the private key that signed the JWT.
    const other = webpush.generateVAPIDKeys();
    const forged = createWebPushProvider(
      { ...config, privateKey: other.privateKey },
      pushDeps(systemClock, peer.origin),
    );
    const subscription = peer.subscribe(vapid.publicKey);
    const result = await forged.send(pushMessage({ recipient: { subscription } }), never);
    // A 4xx is about this subscription: permanent, never the provider's circuit.
    assert.ok(!result.ok && result.kind === 'permanent');
    assert.match(peer.refused.at(-1)?.reason ?? '', /VAPID JWT rejected/);
    assert.equal(result.detail, 'push service answered 401: refused this sender for the subscription');
  });

  it('keeps a circuit per push-service origin', () => {
    const provider = createWebPushProvider(config, pushDeps(systemClock, peer.origin));
    const sub = (endpoint: string) => ({ subscription: { endpoint, keys: { p256dh: 'k', auth: 'a' } } });
    assert.equal(provider.circuitKey?.(sub('https://a.push.example/x/1')), 'https://a.push.example');
    assert.equal(provider.circuitKey?.(sub('https://a.push.example/y/2')), 'https://a.push.example');
    assert.equal(provider.circuitKey?.(sub('https://b.push.example:8443/x')), 'https://b.push.example:8443');
  });

  it('reports a config error for malformed VAPID keys without calling the push service', async () => {
    const before = peer.arrivals.length;
    const deps = pushDeps(systemClock, peer.origin);
    const broken = createWebPushProvider({ ...config, privateKey: 'not-a-key' }, deps);
    const result = await broken.send(
      pushMessage({ recipient: { subscription: peer.subscribe(vapid.publicKey) } }),
      never,
    );
    assert.ok(!result.ok && result.kind === 'config');
    assert.equal(peer.arrivals.length, before);
    assert.ok(!deps.logged.join('\n').includes('not-a-key'));
  });

  it('fails permanently for a subscription with broken keys', async () => {
    const subscription = { ...peer.subscribe(vapid.publicKey), keys: { p256dh: 'AAAA', auth: 'AAAA' } };
    const { result } = await send(subscription);
    assert.ok(!result.ok && result.kind === 'permanent');
  });

  it('refuses a plain-http endpoint without calling it', async () => {
    const before = peer.arrivals.length;
    const https = peer.subscribe(vapid.publicKey);
    const { result } = await send({ ...https, endpoint: https.endpoint.replace('https:', 'http:') });
    assert.ok(!result.ok && result.kind === 'permanent' && /must be an https:\/\/ URL/.test(result.detail));
    assert.equal(peer.arrivals.length, before);
  });

  it('treats an unreachable push service as transient, without the network error code', async () => {
    const subscription = { ...peer.subscribe(vapid.publicKey), endpoint: 'https://127.0.0.1:1/push/x' };
    const listed = createWebPushProvider(config, pushDeps(systemClock, '127.0.0.1:1'));
    const result = await listed.send(pushMessage({ recipient: { subscription } }), never);
    assert.ok(!result.ok && result.kind === 'transient');
    assert.equal(result.detail, 'push request could not reach the push service');
  });

  it('refuses a private address literal at send time, without a request, unless it is listed', async () => {
    const before = peer.arrivals.length;
    const https = peer.subscribe(vapid.publicKey);
    const port = new URL(peer.origin).port;
    for (const host of ['127.0.0.1', '[::1]', '10.0.0.8', '169.254.169.254']) {
      const endpoint = https.endpoint.replace(`localhost:${port}`, `${host}:${port}`);
      const { result } = await send({ ...https, endpoint });
      assert.ok(!result.ok && result.kind === 'permanent', host);
      assert.match(result.detail, /must NOT name a loopback, private/);
    }
    assert.equal(peer.arrivals.length, before);
  });

  it('refuses at connect time a host name that resolves to a private address (DNS rebinding)', async (t) => {
    // The machine's own name: not an address literal nor `localhost`, so it passes the checks on
    // the URL, and it resolves to a loopback or private address (/etc/hosts).
    const name = hostname();
    const addresses = await lookup(name, { all: true }).catch(() => []);
    if (addresses.length === 0) return t.skip(`${name} does not resolve here`);
    assert.ok(
      addresses.every((a) => isPrivateAddress(a.address)),
      `${name} resolves to a public address`,
    );
    const before = peer.arrivals.length;
    const https = peer.subscribe(vapid.publicKey);
    const endpoint = https.endpoint.replace('localhost', name);
    assert.equal(refusedUrl(endpoint, []), undefined, 'acceptance lets the name through');
    const { result } = await send({ ...https, endpoint });
    assert.ok(!result.ok && result.kind === 'permanent');
    assert.equal(result.detail, 'push subscription endpoint resolves to a private address');
    assert.equal(peer.arrivals.length, before, 'no connection was made');
  });
});
