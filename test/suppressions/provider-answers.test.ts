import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import webpush from 'web-push';
import type { Channel, Priority, Recipient } from '../../src/notifications/model.ts';
import { emailProviderFactories } from '../../src/providers/email/index.ts';
import {
  createApnsProvider,
  createFcmProvider,
  createWebPushProvider,
} from '../../src/providers/push/index.ts';
import type { ProviderFactory } from '../../src/providers/registry.ts';
import { smsProviderFactories } from '../../src/providers/sms/index.ts';
import type { Store } from '../../src/store/port/index.ts';
import { schedulerFor, settle, setup } from '../dispatch/harness.ts';
import { createApnsKey, startApnsPeer } from '../helpers/peers/apns.ts';
import { startFcmPeer } from '../helpers/peers/fcm.ts';
import { startSmtpPeer } from '../helpers/peers/smtp.ts';
import { startTwilioPeer } from '../helpers/peers/twilio.ts';
import { startWebPushPeer } from '../helpers/peers/webpush.ts';
import { allowing } from '../providers/push/factories.ts';
import { newNotification, read, seedMany } from '../store/queue-fixtures.ts';
import { TWILIO_TOKEN } from '../webhooks/harness.ts';

const SID = 'AC0123456789abcdef0123456789abcdef';

/** A real peer that answers every send to `recipient` with the failure under test. */
interface Source {
  name: string;
  channel: Channel;
  reason: string;
  env?: Record<string, string>;
  factories: ProviderFactory[];
  recipient: Recipient;
  /** Provider calls the peer saw for the recipient, when it can count them (else Herald's events prove it). */
  calls?: () => number;
  close(): Promise<void>;
}

async function smtp550(): Promise<Source> {
  const peer = await startSmtpPeer({ rejectRecipients: { 'gone@example.com': 550 } });
  return {
    name: 'SMTP 550 at RCPT TO',
    channel: 'email',
    reason: 'bounce',
    env: { SMTP_URL: peer.url(), EMAIL_FROM: 'Herald <noreply@mail.example.com>' },
    factories: emailProviderFactories,
    recipient: { email: 'gone@example.com' },
    calls: () => peer.rcpt.filter((a) => a === 'gone@example.com').length,
    close: () => peer.close(),
  };
}

async function twilio21610(): Promise<Source> {
  const peer = await startTwilioPeer(SID, TWILIO_TOKEN, async () => undefined);
  const to = '+15550107777';
  peer.script(to, { status: 400, code: 21610, message: 'Attempt to send to unsubscribed recipient' });
  return {
    name: 'Twilio error 21610',
    channel: 'sms',
    reason: 'opt_out',
    env: {
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
      TWILIO_FROM: '+15550001111',
      TWILIO_API_BASE: peer.apiBase,
    },
    factories: smsProviderFactories,
    recipient: { phone: to },
    calls: () => peer.requests.filter((r) => r.form.To === to).length,
    close: () => peer.close(),
  };
}

async function webPush410(): Promise<Source> {
  const peer = await startWebPushPeer();
  const vapid = webpush.generateVAPIDKeys();
  const subscription = peer.subscribe(vapid.publicKey);
  const gone = { status: 410, body: 'subscription expired' };
  peer.script(subscription.endpoint, gone, gone, gone);
  const config = { ...vapid, subject: 'mailto:ops@example.com' };
  return {
    name: 'Web Push 410',
    channel: 'push',
    reason: 'unregistered',
    factories: [(deps) => createWebPushProvider(config, allowing(deps, peer.origin))],
    recipient: { subscription },
    close: () => peer.close(),
  };
}

async function apnsUnregistered(): Promise<Source> {
  const key = await createApnsKey();
  const peer = await startApnsPeer({ key, teamId: 'TEAM123456', topic: 'com.example.app' });
  const token = randomBytes(32).toString('hex');
  const gone = { status: 410, reason: 'Unregistered' };
  peer.script(token, gone, gone, gone);
  const config = { keyFile: key.keyFile, keyId: key.keyId, teamId: 'TEAM123456', topic: 'com.example.app' };
  return {
    name: 'APNs Unregistered',
    channel: 'push',
    reason: 'unregistered',
    factories: [(deps) => createApnsProvider({ ...config, host: peer.host }, deps)],
    recipient: { deviceToken: token, platform: 'apns' },
    close: () => peer.close(),
  };
}

async function fcmUnregistered(): Promise<Source> {
  const peer = await startFcmPeer();
  const serviceAccountFile = await peer.createServiceAccount();
  const token = randomBytes(24).toString('base64url');
  const gone = { status: 404, errorStatus: 'NOT_FOUND', errorCode: 'UNREGISTERED' };
  peer.script(token, gone, gone, gone);
  return {
    name: 'FCM UNREGISTERED',
    channel: 'push',
    reason: 'unregistered',
    factories: [(deps) => createFcmProvider({ serviceAccountFile, apiBase: peer.apiBase }, deps)],
    recipient: { deviceToken: token, platform: 'fcm' },
    close: () => peer.close(),
  };
}

describe("suppressions from providers' answers", () => {
  const closers: Array<() => Promise<void>> = [];
  after(async () => {
    for (const close of closers.reverse()) await close();
  });

  for (const make of [smtp550, twilio21610, webPush410, apnsUnregistered, fcmUnregistered]) {
    it(`${make.name}: suppresses; the next NORMAL makes no provider call, a CRITICAL does`, async () => {
      const source = await make();
      closers.push(() => source.close());
      const env = await setup('sqlite', source.env ?? {});
      closers.push(() => env.store.close());
      // Real time, for the providers' signed tokens (APNs, FCM) that their peers check.
      env.clock.set(Date.now());
      const scheduler = schedulerFor(env, { factories: source.factories });
      const send = async (priority: Priority) => {
        const [id] = await seedMany(env.store, [
          newNotification({
            channel: source.channel,
            recipient: source.recipient,
            priority,
            createdAt: env.clock.now(),
          }),
        ]);
        await settle(scheduler);
        return read(env.store, id as string);
      };

      const first = await send('NORMAL');
      assert.equal(first.record.status, 'FAILED', `${source.name}: ${JSON.stringify(first.events)}`);
      assert.match(
        first.events.at(-1)?.detail ?? '',
        new RegExp(`recipient suppressed \\(${source.reason}\\)`),
      );
      const [stored] = await suppressionsOf(env.store);
      assert.equal(stored?.reason, source.reason);
      const calls = source.calls?.();
      if (calls !== undefined) assert.equal(calls, 1);

      const stopped = await send('NORMAL');
      assert.equal(stopped.record.status, 'FAILED');
      assert.equal(stopped.record.attempts, 0);
      assert.deepEqual(
        stopped.events.map((e) => [e.type, e.provider ?? null]),
        [['FAILED', null]],
      );
      assert.match(
        stopped.events[0]?.detail ?? '',
        new RegExp(`recipient suppressed \\(${source.reason} since`),
      );
      if (calls !== undefined)
        assert.equal(source.calls?.(), calls, 'no provider call for the suppressed NORMAL');

      const critical = await send('CRITICAL');
      assert.ok(
        critical.events.some((e) => e.type === 'ATTEMPT_FAILED' && e.provider !== undefined),
        `the CRITICAL reached the provider: ${JSON.stringify(critical.events)}`,
      );
      if (calls !== undefined) assert.equal(source.calls?.(), calls + 1, 'CRITICAL is always attempted');
    });
  }
});

const suppressionsOf = async (store: Store) => (await store.suppressions.list('t1', { limit: 10 })).items;
