import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { manualClock } from '../../../src/clock.ts';
import { createApnsProvider } from '../../../src/providers/push/apns.ts';
import type { Provider } from '../../../src/providers/types.ts';
import { type ApnsKey, type ApnsPeer, createApnsKey, startApnsPeer } from '../../helpers/peers/apns.ts';
import { never, pushDeps, pushMessage } from './factories.ts';

const TEAM = 'TEAM123456';
const TOPIC = 'com.example.herald';

const deviceToken = () => randomBytes(32).toString('hex');

describe('APNs provider against a local HTTP/2 APNs', () => {
  const clock = manualClock(Date.now());
  let key: ApnsKey;
  let peer: ApnsPeer;
  let provider: Provider;
  let config: { keyFile: string; keyId: string; teamId: string; topic: string; host: string };

  before(async () => {
    key = await createApnsKey();
    peer = await startApnsPeer({ key, teamId: TEAM, topic: TOPIC, now: clock.now });
    config = { keyFile: key.keyFile, keyId: key.keyId, teamId: TEAM, topic: TOPIC, host: peer.host };
    provider = createApnsProvider(config, pushDeps(clock));
  });
  after(async () => {
    await provider.close?.();
    await peer.close();
  });

  const send = (token: string, priority: 'CRITICAL' | 'NORMAL' = 'NORMAL', via = provider) => {
    const message = pushMessage({ recipient: { deviceToken: token, platform: 'apns' }, priority });
    return via.send(message, never).then((result) => ({ result, message }));
  };

  it('accepts only APNs device tokens', () => {
    assert.equal(provider.accepts({ deviceToken: 'ab', platform: 'apns' }), true);
    assert.equal(provider.accepts({ deviceToken: 'ab', platform: 'fcm' }), false);
    assert.equal(
      provider.accepts({ subscription: { endpoint: 'https://x', keys: { p256dh: 'a', auth: 'b' } } }),
      false,
    );
  });

  it('delivers an alert with the topic, priority 10 for CRITICAL and the notification ID as apns-id', async () => {
    const token = deviceToken();
    const { result, message } = await send(token, 'CRITICAL');
    assert.deepEqual(result, {
      ok: true,
      providerMessageId: message.notificationId,
      detail: '200 accepted by APNs',
    });
    const received = peer.received.at(-1);
    assert.ok(received);
    assert.equal(received.deviceToken, token);
    assert.equal(received.headers['apns-topic'], TOPIC);
    assert.equal(received.headers['apns-push-type'], 'alert');
    assert.equal(received.headers['apns-priority'], '10');
    assert.equal(received.headers['apns-id'], message.notificationId);
    assert.deepEqual(received.payload, {
      aps: { alert: { title: 'Build finished', body: 'All 42 checks passed' }, sound: 'default' },
      build: 42,
      notificationId: message.notificationId,
    });
    assert.deepEqual(decodeProtectedHeader(received.providerToken), { alg: 'ES256', kid: key.keyId });
    assert.equal(decodeJwt(received.providerToken).iss, TEAM);
  });

  it('sends NORMAL priority with apns-priority 5', async () => {
    await send(deviceToken(), 'NORMAL');
    assert.equal(peer.received.at(-1)?.headers['apns-priority'], '5');
  });

  it('sends data-only content as a background push with priority 5, even when CRITICAL', async () => {
    const token = deviceToken();
    const message = pushMessage({
      recipient: { deviceToken: token, platform: 'apns' },
      priority: 'CRITICAL',
      content: { data: { sync: true } },
    });
    assert.ok((await provider.send(message, never)).ok);
    const received = peer.received.at(-1);
    assert.equal(received?.headers['apns-push-type'], 'background');
    assert.equal(received?.headers['apns-priority'], '5');
    assert.deepEqual(received?.payload, {
      aps: { 'content-available': 1 },
      sync: true,
      notificationId: message.notificationId,
    });
  });

  it('reuses one provider token for 50 minutes, then signs a new one', async () => {
    const fresh = createApnsProvider(config, pushDeps(clock));
    const seen = () => new Set(peer.providerTokens.slice(start));
    const start = peer.providerTokens.length;
    await send(deviceToken(), 'NORMAL', fresh);
    clock.advance(20 * 60_000);
    await send(deviceToken(), 'NORMAL', fresh);
    clock.advance(29 * 60_000);
    await send(deviceToken(), 'NORMAL', fresh);
    assert.equal(seen().size, 1);
    clock.advance(2 * 60_000);
    await send(deviceToken(), 'NORMAL', fresh);
    assert.equal(seen().size, 2);
    const [first, second] = [...seen()].map((token) => decodeJwt(token).iat as number);
    assert.equal((second as number) - (first as number), 51 * 60);
    await fresh.close?.();
  });

  it('signs a new token after APNs reports ExpiredProviderToken, and retries later', async () => {
    const token = deviceToken();
    peer.script(token, { status: 403, reason: 'ExpiredProviderToken' });
    const before = peer.providerTokens.length;
    const { result } = await send(token);
    assert.ok(!result.ok && result.kind === 'transient');
    assert.ok((await send(token)).result.ok);
    const [expired, renewed] = peer.providerTokens.slice(before);
    assert.notEqual(expired, renewed);
  });

  it('fails permanently and reports the device unregistered on 410 Unregistered', async () => {
    const token = deviceToken();
    peer.script(token, { status: 410, reason: 'Unregistered' });
    const { result } = await send(token);
    assert.ok(!result.ok && result.kind === 'permanent' && result.suppress === 'unregistered');
    assert.match(!result.ok ? result.detail : '', /Unregistered/);
  });

  it('fails permanently on 400 BadDeviceToken and suppresses the token (it never takes a push)', async () => {
    const token = deviceToken();
    peer.script(token, { status: 400, reason: 'BadDeviceToken' });
    const { result } = await send(token);
    assert.ok(!result.ok && result.kind === 'permanent' && result.suppress === 'unregistered');
  });

  it('fails permanently on 400 DeviceTokenNotForTopic without suppressing the token', async () => {
    const token = deviceToken();
    peer.script(token, { status: 400, reason: 'DeviceTokenNotForTopic' });
    const { result } = await send(token);
    assert.ok(!result.ok && result.kind === 'permanent' && result.suppress === undefined);
  });

  it('fails permanently for a token that is not hexadecimal, without calling APNs', async () => {
    const before = peer.providerTokens.length;
    const { result } = await send('not-a-token');
    assert.ok(!result.ok && result.kind === 'permanent');
    assert.equal(peer.providerTokens.length, before);
  });

  it('retries later on 429 TooManyRequests, honouring Retry-After', async () => {
    const token = deviceToken();
    peer.script(token, { status: 429, reason: 'TooManyRequests', headers: { 'retry-after': '30' } });
    const { result } = await send(token);
    assert.ok(!result.ok && result.kind === 'transient' && result.retryAfterMs === 30_000);
  });

  for (const [status, reason] of [
    [500, 'InternalServerError'],
    [503, 'ServiceUnavailable'],
  ] as const) {
    it(`treats ${status} ${reason} as transient`, async () => {
      const token = deviceToken();
      peer.script(token, { status, reason });
      const { result } = await send(token);
      assert.ok(!result.ok && result.kind === 'transient');
    });
  }

  it('reports a config error when APNs refuses the signing key', async () => {
    const other = await createApnsKey(key.keyId);
    const wrong = createApnsProvider({ ...config, keyFile: other.keyFile }, pushDeps(clock));
    const { result } = await send(deviceToken(), 'NORMAL', wrong);
    assert.ok(!result.ok && result.kind === 'config' && /InvalidProviderToken/.test(result.detail));
    await wrong.close?.();
  });

  it('reports a config error for a topic APNs does not accept', async () => {
    const wrong = createApnsProvider({ ...config, topic: 'com.example.other' }, pushDeps(clock));
    const { result } = await send(deviceToken(), 'NORMAL', wrong);
    assert.ok(!result.ok && result.kind === 'config');
    await wrong.close?.();
  });

  it('reports a config error for an unreadable key file, without calling APNs', async () => {
    const before = peer.providerTokens.length;
    const missing = createApnsProvider({ ...config, keyFile: '/nonexistent/AuthKey.p8' }, pushDeps(clock));
    const { result } = await send(deviceToken(), 'NORMAL', missing);
    assert.ok(!result.ok && result.kind === 'config' && /APNS_KEY_FILE/.test(result.detail));
    assert.equal(peer.providerTokens.length, before);
  });

  it('treats an unreachable APNs as transient', async () => {
    const down = createApnsProvider({ ...config, host: 'https://127.0.0.1:1' }, pushDeps(clock));
    const { result } = await send(deviceToken(), 'NORMAL', down);
    assert.ok(!result.ok && result.kind === 'transient');
    await down.close?.();
  });
});
