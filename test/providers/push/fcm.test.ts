import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { manualClock } from '../../../src/clock.ts';
import { createFcmProvider } from '../../../src/providers/push/fcm.ts';
import type { Provider } from '../../../src/providers/types.ts';
import { type FcmPeer, startFcmPeer } from '../../helpers/peers/fcm.ts';
import { never, pushDeps, pushMessage } from './factories.ts';

const registration = () => randomBytes(24).toString('base64url');

describe('FCM HTTP v1 provider against a local OAuth + FCM peer', () => {
  const clock = manualClock(Date.now());
  let peer: FcmPeer;
  let provider: Provider;
  let serviceAccountFile: string;

  before(async () => {
    peer = await startFcmPeer();
    serviceAccountFile = await peer.createServiceAccount();
    provider = createFcmProvider({ serviceAccountFile, apiBase: peer.apiBase }, pushDeps(clock));
  });
  after(() => peer.close());

  const fresh = (file = serviceAccountFile) =>
    createFcmProvider({ serviceAccountFile: file, apiBase: peer.apiBase }, pushDeps(clock));
  const send = (token: string, priority: 'HIGH' | 'LOW' = 'LOW', via = provider) => {
    const message = pushMessage({ recipient: { deviceToken: token, platform: 'fcm' }, priority });
    return via.send(message, never).then((result) => ({ result, message }));
  };

  it('accepts only FCM registration tokens', () => {
    assert.equal(provider.accepts({ deviceToken: 'x', platform: 'fcm' }), true);
    assert.equal(provider.accepts({ deviceToken: 'x', platform: 'apns' }), false);
  });

  it('sends the message to the project and records the returned name as the provider message id', async () => {
    const token = registration();
    const { result, message } = await send(token, 'HIGH');
    const received = peer.received.at(-1);
    assert.ok(received);
    assert.deepEqual(result, { ok: true, providerMessageId: received.name, detail: 'accepted by FCM' });
    assert.equal(received.project, 'herald-test');
    assert.deepEqual(received.message, {
      token,
      notification: { title: 'Build finished', body: 'All 42 checks passed' },
      data: { build: '42', notificationId: message.notificationId },
      android: { priority: 'HIGH', collapse_key: message.notificationId },
      apns: { headers: { 'apns-priority': '10', 'apns-collapse-id': message.notificationId } },
    });
  });

  it('reuses the access token until shortly before it expires, then exchanges a new one', async () => {
    const own = fresh();
    const before = peer.exchanges;
    await send(registration(), 'LOW', own);
    clock.advance(30 * 60_000);
    await send(registration(), 'LOW', own);
    assert.equal(peer.exchanges - before, 1);
    // 3599 s lifetime, renewed 5 minutes early: at 56 minutes it is due.
    clock.advance(26 * 60_000);
    await send(registration(), 'LOW', own);
    assert.equal(peer.exchanges - before, 2);
  });

  it('shares one exchange among concurrent first sends', async () => {
    const own = fresh();
    const before = peer.exchanges;
    const results = await Promise.all([1, 2, 3, 4].map(() => send(registration(), 'LOW', own)));
    assert.ok(results.every(({ result }) => result.ok));
    assert.equal(peer.exchanges - before, 1);
  });

  it('exchanges again and succeeds when FCM refuses a revoked access token', async () => {
    await send(registration());
    const before = peer.exchanges;
    peer.revokeAll();
    const { result } = await send(registration());
    assert.equal(result.ok, true);
    assert.equal(peer.exchanges - before, 1);
  });

  it('fails permanently on UNREGISTERED and reports the token gone', async () => {
    const token = registration();
    peer.script(token, { status: 404, errorStatus: 'NOT_FOUND', errorCode: 'UNREGISTERED' });
    const { result } = await send(token);
    assert.ok(!result.ok && result.kind === 'permanent' && result.suppress === 'unregistered');
    assert.match(!result.ok ? result.detail : '', /UNREGISTERED/);
  });

  it('fails permanently on INVALID_ARGUMENT without dropping the token', async () => {
    const token = registration();
    peer.script(token, { status: 400, errorStatus: 'INVALID_ARGUMENT', errorCode: 'INVALID_ARGUMENT' });
    const { result } = await send(token);
    assert.ok(!result.ok && result.kind === 'permanent' && result.suppress === undefined);
  });

  for (const [status, errorStatus, errorCode] of [
    [429, 'RESOURCE_EXHAUSTED', 'QUOTA_EXCEEDED'],
    [503, 'UNAVAILABLE', 'UNAVAILABLE'],
  ] as const) {
    it(`retries later on ${errorCode}, honouring Retry-After`, async () => {
      const token = registration();
      peer.script(token, { status, errorStatus, errorCode, headers: { 'retry-after': '45' } });
      const { result } = await send(token);
      assert.ok(!result.ok && result.kind === 'transient' && result.retryAfterMs === 45_000);
    });
  }

  it('treats a bare 500 as transient', async () => {
    const token = registration();
    peer.script(token, { status: 500, errorStatus: 'INTERNAL' });
    const { result } = await send(token);
    assert.ok(!result.ok && result.kind === 'transient');
  });

  it('treats an unavailable token endpoint as transient', async () => {
    const own = fresh();
    peer.scriptToken({ status: 503, headers: { 'retry-after': '5' } });
    const { result } = await send(registration(), 'LOW', own);
    assert.ok(!result.ok && result.kind === 'transient' && result.retryAfterMs === 5000);
  });

  it('reports a config error when the token endpoint refuses the service account key', async () => {
    const untrusted = await peer.createServiceAccount({ trusted: false, projectId: 'other-project' });
    const { result } = await send(registration(), 'LOW', fresh(untrusted));
    assert.ok(!result.ok && result.kind === 'config' && /invalid_grant/.test(result.detail));
    assert.match(peer.refused.at(-1)?.reason ?? '', /invalid_grant/);
  });

  it('reports a config error for a missing service account file', async () => {
    const { result } = await send(registration(), 'LOW', fresh('/nonexistent/sa.json'));
    assert.ok(!result.ok && result.kind === 'config' && /FCM_SERVICE_ACCOUNT_FILE/.test(result.detail));
  });

  it('treats an unreachable FCM as transient', async () => {
    const down = createFcmProvider({ serviceAccountFile, apiBase: 'http://127.0.0.1:1' }, pushDeps(clock));
    const { result } = await send(registration(), 'LOW', down);
    assert.ok(!result.ok && result.kind === 'transient');
  });
});
