// Provider failover (API.md §11) with real peers: two SMTP servers, and a Twilio peer with an
// SMPP one. The primary fails; attempts go to the fallback at once; once the primary's circuit
// is open, first attempts go straight to the fallback; when the primary is back, its half-open
// circuit takes the next send and the traffic returns to it.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { manualClock } from '../../src/clock.ts';
import { createProviderStates } from '../../src/dispatch/provider-state.ts';
import type { Scheduler } from '../../src/dispatch/scheduler.ts';
import type { Channel, Priority, Recipient } from '../../src/notifications/model.ts';
import { emailProviderFactories } from '../../src/providers/email/index.ts';
import { createProviderRegistry } from '../../src/providers/registry.ts';
import { smsProviderFactories } from '../../src/providers/sms/index.ts';
import type { Provider } from '../../src/providers/types.ts';
import { createRenderer } from '../../src/templates/render.ts';
import { startSmppPeer } from '../helpers/peers/smpp.ts';
import { type SmtpPeer, startSmtpPeer } from '../helpers/peers/smtp.ts';
import { startTwilioPeer } from '../helpers/peers/twilio.ts';
import { portOutsideEphemeralRange } from '../helpers/ports.ts';
import { newNotification, read, seedMany } from '../store/queue-fixtures.ts';
import { TWILIO_TOKEN } from '../webhooks/harness.ts';
import { closeProviders, quiet, schedulerFor, settle, setup, storeKinds } from './harness.ts';

/** Two failures open a circuit for 1 s (then 2 s, 4 s): the clock is moved past it by hand. */
const circuit = { failureThreshold: 2, openMs: 1000, maxOpenMs: 4000, configPauseMs: 60_000 };

/** Sends one notification and returns its events as `TYPE provider` strings (PROCESSING dropped). */
async function attempt(
  env: Awaited<ReturnType<typeof setup>>,
  scheduler: Scheduler,
  channel: Channel,
  recipient: Recipient,
  priority: Priority = 'CRITICAL',
) {
  const [id] = await seedMany(env.store, [
    newNotification({ channel, recipient, priority, createdAt: env.clock.now() }),
  ]);
  await settle(scheduler);
  const { record, events } = await read(env.store, id as string);
  return {
    status: record.status,
    trail: events.filter((e) => e.type !== 'PROCESSING').map((e) => `${e.type} ${e.provider ?? '-'}`),
  };
}

const kinds = storeKinds();

describe('provider failover', () => {
  const closers: Array<() => Promise<void>> = [];
  after(async () => {
    for (const close of closers.reverse()) await close();
  });

  for (const kind of kinds)
    it(`SMTP (${kind}): a primary that refuses connections hands every attempt to SMTP_FALLBACK_URL, and takes it back when up`, async () => {
      const primaryPort = await portOutsideEphemeralRange(); // nothing listens: connections are refused
      const fallback = await startSmtpPeer();
      closers.push(() => fallback.close());
      const env = await setup(kind, {
        SMTP_URL: `smtp://127.0.0.1:${primaryPort}`,
        SMTP_FALLBACK_URL: fallback.url(),
        EMAIL_FROM: 'Herald <noreply@mail.example.com>',
      });
      closers.push(() => env.store.close());
      env.clock.set(Date.now());
      const scheduler = schedulerFor(env, { factories: emailProviderFactories, circuit });
      closers.push(() => closeProviders(scheduler));
      const email = (n: number) => ({ email: `user${n}@example.com` });

      // Closed circuit: the attempt fails at the primary and the retry goes to the fallback at
      // once (no backoff: the notification never waits for the clock).
      const first = await attempt(env, scheduler, 'email', email(1));
      assert.equal(first.status, 'SENT');
      assert.deepEqual(first.trail, ['ATTEMPT_FAILED smtp', 'RETRYING -', 'SENT smtp-fallback']);

      // The second failure opens the primary's circuit; from then on a CRITICAL's first attempt
      // goes straight to the fallback: no failed attempt, no wait.
      await attempt(env, scheduler, 'email', email(2));
      const open = await attempt(env, scheduler, 'email', email(3));
      assert.deepEqual(open.trail, ['SENT smtp-fallback']);
      const low = await attempt(env, scheduler, 'email', email(4), 'LOW');
      assert.deepEqual(low.trail, ['SENT smtp-fallback'], 'every priority fails over');

      // The primary comes back on its port; once the circuit's open time has passed, the
      // half-open probe goes to it, succeeds, and the traffic stays there.
      const primary: SmtpPeer = await startSmtpPeer({ port: primaryPort });
      closers.push(() => primary.close());
      env.clock.advance(circuit.maxOpenMs + 1);
      const back = await attempt(env, scheduler, 'email', email(5));
      assert.deepEqual(back.trail, ['SENT smtp']);
      const after = await attempt(env, scheduler, 'email', email(6), 'NORMAL');
      assert.deepEqual(after.trail, ['SENT smtp']);
      assert.deepEqual(
        primary.received.map((m) => m.to[0]),
        ['user5@example.com', 'user6@example.com'],
      );
      assert.deepEqual(
        fallback.received.map((m) => m.to[0]),
        ['user1@example.com', 'user2@example.com', 'user3@example.com', 'user4@example.com'],
      );
    });

  /** A Twilio peer and an SMPP peer, both configured, in `order` (HERALD_SMS_PROVIDERS). */
  async function smsRig(order: string) {
    const twilio = await startTwilioPeer(
      'AC0123456789abcdef0123456789abcdef',
      TWILIO_TOKEN,
      async () => undefined,
    );
    closers.push(() => twilio.close());
    const smsc = await startSmppPeer({ systemId: 'herald', password: 'secret1', receipts: {} });
    closers.push(() => smsc.close());
    const env = await setup('sqlite', {
      TWILIO_ACCOUNT_SID: 'AC0123456789abcdef0123456789abcdef',
      TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
      TWILIO_FROM: '+15550001111',
      TWILIO_API_BASE: twilio.apiBase,
      SMPP_URL: smsc.url(),
      SMPP_SOURCE_ADDR: 'Herald',
      HERALD_SMS_PROVIDERS: order,
    });
    closers.push(() => env.store.close());
    env.clock.set(Date.now());
    const scheduler = schedulerFor(env, { factories: smsProviderFactories, circuit });
    closers.push(() => closeProviders(scheduler));
    return { twilio, smsc, env, scheduler };
  }

  it('SMS: HERALD_SMS_PROVIDERS orders Twilio and SMPP; a failing primary fails over and gets its traffic back', async () => {
    const { twilio, smsc, env, scheduler } = await smsRig('twilio,smpp');
    const phone = (n: number) => ({ phone: `+1555020000${n}` });
    // Twilio answers 503 (its own outage) to the first three numbers, then works again.
    for (const n of [1, 2, 3])
      twilio.script(`+1555020000${n}`, { status: 503, code: 20500, message: 'down' });

    assert.deepEqual((await attempt(env, scheduler, 'sms', phone(1))).trail, [
      'ATTEMPT_FAILED twilio',
      'RETRYING -',
      'SENT smpp',
    ]);
    await attempt(env, scheduler, 'sms', phone(2)); // the second failure opens Twilio's circuit
    assert.deepEqual((await attempt(env, scheduler, 'sms', phone(3))).trail, ['SENT smpp']);
    env.clock.advance(circuit.maxOpenMs + 1);
    assert.deepEqual((await attempt(env, scheduler, 'sms', phone(4))).trail, ['SENT twilio']);
    assert.deepEqual((await attempt(env, scheduler, 'sms', phone(5))).trail, ['SENT twilio']);
    assert.deepEqual(
      smsc.submitted.map((s) => s.destinationAddr),
      ['15550200001', '15550200002', '15550200003'],
    );
  });

  it('SMS: with HERALD_SMS_PROVIDERS=smpp,twilio, SMPP is the primary', async () => {
    const { twilio, env, scheduler } = await smsRig('smpp,twilio');
    assert.deepEqual((await attempt(env, scheduler, 'sms', { phone: '+15550300001' })).trail, ['SENT smpp']);
    assert.equal(twilio.requests.length, 0);
  });

  it('a retry after a failure to render (no provider called) goes to the primary again, not to the fallback', async () => {
    const env = await setup();
    closers.push(() => env.store.close());
    const sent: string[] = [];
    const smtp = (name: string): Provider => ({
      name,
      route: 'smtp',
      channel: 'email',
      limits: { concurrency: 10, ratePerSecond: 1000, burst: 1000 },
      accepts: () => true,
      send: async () => {
        sent.push(name);
        return { ok: true };
      },
    });
    // The template store fails its first read (a fault of Herald's own, not of the message).
    let reads = 0;
    const templates = {
      ...env.store.templates,
      getVersion: (tenant: string, key: string, version: number) => {
        reads += 1;
        if (reads === 1) return Promise.reject(new Error('template store unavailable'));
        return env.store.templates.getVersion(tenant, key, version);
      },
    };
    const renderer = createRenderer({ ...env.store, templates });
    const scheduler = schedulerFor(env, {
      factories: [() => [smtp('smtp'), smtp('smtp-fallback')]],
      circuit,
      renderer,
    });
    await env.store.templates.create(
      't1',
      'welcome',
      'email',
      { subject: 'Hi', text: 'Hello' },
      env.clock.now(),
    );
    const [id] = await seedMany(env.store, [
      newNotification({
        templateKey: 'welcome',
        templateVersion: 1,
        content: null,
        createdAt: env.clock.now(),
      }),
    ]);
    await settle(scheduler);
    assert.equal((await read(env.store, id as string)).record.status, 'RETRYING');
    env.clock.advance(60_000); // past the retry's backoff
    await settle(scheduler);
    const { record, events } = await read(env.store, id as string);
    assert.equal(record.status, 'SENT');
    assert.deepEqual(sent, ['smtp']);
    const failed = events.find((e) => e.type === 'ATTEMPT_FAILED');
    assert.match(failed?.detail ?? '', /rendering failed: template store unavailable/);
    assert.equal(failed?.provider ?? null, null, 'no provider was called, so none is blamed');
  });

  it("plans each claim by the provider the next send goes to, with that provider's own limits", async () => {
    const env = await setup();
    closers.push(() => env.store.close());
    const clock = manualClock(0);
    const smtp = (name: string, concurrency: number): Provider => ({
      name,
      route: 'smtp',
      channel: 'email',
      limits: { concurrency, ratePerSecond: 1000, burst: 1000 },
      accepts: () => true,
      send: async () => ({ ok: true }),
    });
    const primary = smtp('smtp', 8);
    const fallback = smtp('smtp-fallback', 4);
    const registry = createProviderRegistry(
      { config: env.config, clock, reports: { report: async () => {} }, log: quiet },
      [() => [primary, fallback]],
    );
    const states = createProviderStates(registry, clock, circuit);
    // Closed primary: its room alone (the fallback's idle slots are not a second pool to fill).
    assert.equal(states.channelCapacity('email', 0, 100), 8);
    // LOW keeps out of the reserve of the provider it would use: half of the primary's 8.
    assert.equal(states.channelCapacity('email', 3, 100), 4);
    states.of(primary).circuit.failure();
    states.of(primary).circuit.failure();
    // Open primary: the fallback's room, under its own reserve.
    assert.equal(states.channelCapacity('email', 0, 100), 4);
    assert.equal(states.channelCapacity('email', 3, 100), 2);
    clock.advance(circuit.openMs);
    // Half-open: the one probe to the primary.
    assert.equal(states.channelCapacity('email', 0, 100), 1);
  });
});
