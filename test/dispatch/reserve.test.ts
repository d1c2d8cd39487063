// Reserved capacity at every provider (API.md §5), end to end: a real Herald (API and worker in
// one process) in front of real peers whose LOW answers are slow or never come. CRITICAL and HIGH
// must still reach each peer while thousands of LOW wait. What is asserted is that they arrive
// while every LOW send the provider may run is still held at the peer (no LOW slot ever freed);
// how long they took is printed as a diagnostic and measured in the bench, not asserted.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import webpush from 'web-push';
import { type Herald, startHerald } from '../../src/main.ts';
import { authHeader } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { type SmtpPeer, startSmtpPeer } from '../helpers/peers/smtp.ts';
import type { Stall } from '../helpers/peers/stall.ts';
import { startTwilioPeer, type TwilioPeer } from '../helpers/peers/twilio.ts';
import { startWebPushPeer, type WebPushPeer } from '../helpers/peers/webpush.ts';

const LOW_BACKLOG = 2000;

describe('capacity reserved for CRITICAL and HIGH at every provider', () => {
  let herald: Herald;
  let headers: { authorization: string };
  let smtp: SmtpPeer;
  let twilio: TwilioPeer;
  let push: WebPushPeer;
  const vapid = webpush.generateVAPIDKeys();
  before(async () => {
    smtp = await startSmtpPeer();
    twilio = await startTwilioPeer('AC0123456789abcdef0123456789abcdef', 'token');
    push = await startWebPushPeer();
    herald = await startHerald(
      testConfig({
        HERALD_ROLES: 'auth,api,worker',
        SMTP_URL: smtp.url(undefined, undefined, 'maxConnections=4&rateLimit=0'),
        EMAIL_FROM: 'Herald <noreply@example.com>',
        TWILIO_ACCOUNT_SID: 'AC0123456789abcdef0123456789abcdef',
        TWILIO_AUTH_TOKEN: 'token',
        TWILIO_FROM: '+15550000000',
        TWILIO_API_BASE: twilio.apiBase,
        VAPID_PUBLIC_KEY: vapid.publicKey,
        VAPID_PRIVATE_KEY: vapid.privateKey,
        VAPID_SUBJECT: 'mailto:ops@example.com',
        HERALD_PUSH_ALLOWED_HOSTS: new URL(push.origin).host,
      }),
    );
    headers = await authHeader(herald.deps, { role: 'admin' });
  });
  after(async () => {
    for (const peer of [smtp, twilio, push]) peer.stall.release();
    await herald.close();
    await Promise.all([smtp.close(), twilio.close(), push.close()]);
  });

  const api = () => herald.api as NonNullable<Herald['api']>;

  async function post(body: object): Promise<number> {
    const response = await api().inject({ method: 'POST', url: '/notifications', headers, payload: body });
    assert.equal(response.statusCode, 201, response.body);
    return Date.now();
  }

  async function backlog(priority: string, make: (i: number) => object): Promise<void> {
    for (let start = 0; start < LOW_BACKLOG; start += 1000) {
      const notifications = Array.from({ length: 1000 }, (_, i) => ({
        priority,
        ...make(start + i),
      }));
      const response = await api().inject({
        method: 'POST',
        url: '/notifications/batch',
        headers,
        payload: { notifications },
      });
      assert.equal(response.statusCode, 207);
      const refused = response.json().results.filter((r: { error?: unknown }) => r.error);
      assert.deepEqual(refused, []);
    }
  }

  /**
   * The shared script of each channel: a LOW backlog fills the provider's LOW share with sends the
   * peer holds (`lowDelay` ms each, or for ever), then CRITICAL and HIGH, one by one, must each
   * reach the peer while those LOW sends are still held.
   */
  async function urgentGetThrough(rig: {
    /** The bulk priority of the backlog (LOW unless said). */
    bulk?: string;
    stall: Stall;
    lowDelay: number;
    /** Whether the peer's key (recipient, number or subscription) is one of this backlog's LOW. */
    isLow: (key: string) => boolean;
    /** The LOW sends the provider may run at once (half its slots). */
    lowSlots: number;
    low: (i: number) => object;
    urgent: (i: number, priority: string) => object;
    /** When urgent notification `i` reached the peer (its first byte of the transaction), if it has. */
    arrived: (i: number) => number | undefined;
  }) {
    rig.stall.delay = (key) => (rig.isLow(key) ? rig.lowDelay : 0);
    await backlog(rig.bulk ?? 'LOW', rig.low);
    await eventually(
      () => rig.stall.held === rig.lowSlots,
      10_000,
      `${rig.lowSlots} LOW sends held at the peer`,
    );
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      const accepted = await post(rig.urgent(i, i % 2 === 0 ? 'CRITICAL' : 'HIGH'));
      await eventually(() => rig.arrived(i) !== undefined, 10_000, `urgent notification ${i} at the peer`);
      waits.push((rig.arrived(i) as number) - accepted);
      assert.equal(rig.stall.held, rig.lowSlots, 'it got through while every LOW slot was still held');
    }
    return waits;
  }

  it('SMTP: a slow server (2 s a LOW message) and a stalled one (NORMAL) still take CRITICAL and HIGH at once', async (t) => {
    // Four connections: LOW may hold two, NORMAL and LOW together three.
    for (const [label, bulk, lowDelay, slots] of [
      ['slow', 'LOW', 2000, 2],
      ['stalled', 'NORMAL', Number.POSITIVE_INFINITY, 3],
    ] as const) {
      const tag = `${label}${Date.now()}`;
      const waits = await urgentGetThrough({
        bulk,
        stall: smtp.stall,
        lowDelay,
        isLow: (key) => key.startsWith(`low-${tag}-`),
        lowSlots: slots,
        low: (i) => ({
          channel: 'email',
          recipient: { email: `low-${tag}-${i}@example.com` },
          content: { subject: 'News', text: 'Our newsletter' },
        }),
        urgent: (i, priority) => ({
          channel: 'email',
          priority,
          recipient: { email: `urgent-${tag}-${i}@example.com` },
          content: { subject: 'Your code', text: '123456' },
        }),
        arrived: (i) => smtp.received.find((m) => m.to[0] === `urgent-${tag}-${i}@example.com`)?.at,
      });
      t.diagnostic(`SMTP ${label} ${bulk}: 201 to the peer, ms: ${waits.join(', ')}`);
      await stopBacklog(smtp.stall, bulk, 'email');
    }
  });

  it('Twilio (HTTP SMS): with every LOW request stalled, CRITICAL and HIGH still reach the API', async (t) => {
    const waits = await urgentGetThrough({
      stall: twilio.stall,
      lowDelay: Number.POSITIVE_INFINITY,
      isLow: (key) => key.startsWith('+1555'),
      lowSlots: 8,
      low: (i) => ({
        channel: 'sms',
        recipient: { phone: `+1555${String(i).padStart(7, '0')}` },
        content: { text: 'Our newsletter' },
      }),
      urgent: (i, priority) => ({
        channel: 'sms',
        priority,
        recipient: { phone: `+1666555${String(i).padStart(4, '1')}` },
        content: { text: 'Your code is 123456' },
      }),
      arrived: (i) => twilio.requests.find((r) => r.form.To === `+1666555${String(i).padStart(4, '1')}`)?.at,
    });
    t.diagnostic(`Twilio stalled: 201 to the peer, ms: ${waits.join(', ')}`);
    await stopBacklog(twilio.stall, 'LOW', 'sms');
  });

  it('Web Push: with every LOW push stalled, CRITICAL and HIGH still reach the push service', async (t) => {
    const lowSubscription = push.subscribe(vapid.publicKey);
    const lowId = lowSubscription.endpoint.split('/').pop() ?? '';
    const urgent = Array.from({ length: 6 }, () => push.subscribe(vapid.publicKey));
    const waits = await urgentGetThrough({
      stall: push.stall,
      lowDelay: Number.POSITIVE_INFINITY,
      isLow: (key) => key === lowId,
      lowSlots: 32,
      low: () => ({
        channel: 'push',
        recipient: { subscription: lowSubscription },
        content: { title: 'News', body: 'Our newsletter' },
      }),
      urgent: (i, priority) => ({
        channel: 'push',
        priority,
        recipient: { subscription: urgent[i] },
        content: { title: 'Alert', body: 'now' },
      }),
      arrived: (i) =>
        push.received.find((r) => r.subscriptionId === urgent[i]?.endpoint.split('/').pop())?.at,
    });
    // The LOW subscription is the stalled one.
    assert.ok(push.received.filter((r) => r.subscriptionId === lowId).length >= 32);
    t.diagnostic(`Web Push stalled: 201 to the peer, ms: ${waits.join(', ')}`);
    await stopBacklog(push.stall, 'LOW', 'push');
  });

  /**
   * Pauses the rest of a backlog (so one test's bulk does not run into the next) and lets the
   * held sends go, waiting until they have answered.
   */
  async function stopBacklog(stall: Stall, priority: string, channel: string) {
    await api().inject({
      method: 'POST',
      url: '/admin/queues/pause',
      headers,
      payload: { priority, channel },
    });
    stall.delay = () => 0;
    stall.release();
    await eventually(
      async () => {
        const { queues } = (await api().inject({ method: 'GET', url: '/admin/queues', headers })).json();
        return queues.every((q: { inFlight: number }) => q.inFlight === 0);
      },
      10_000,
      'the held sends answered',
    );
  }
});
