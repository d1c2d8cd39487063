import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Recipient } from '../../src/notifications/model.ts';
import { newNotification, read, seedMany } from '../store/queue-fixtures.ts';
import { drain, schedulerFor, scriptedProvider, storeKinds, suiteStores, tick } from './harness.ts';

const circuit = { failureThreshold: 2, openMs: 10_000, maxOpenMs: 60_000, configPauseMs: 30_000 };

for (const kind of storeKinds())
  describe(`circuit breaker and provider limits (${kind})`, () => {
    const fresh = suiteStores(kind);

    it('holds notifications back without using their attempts while the circuit is open', async () => {
      const env = await fresh({ HERALD_CLAIM_BATCH: '1' });
      let healthy = false;
      const provider = scriptedProvider('email', () =>
        healthy ? { ok: true } : { ok: false, kind: 'transient', detail: '503 unavailable' },
      );
      const ids = await seedMany(
        env.store,
        Array.from({ length: 5 }, () => newNotification()),
      );
      const scheduler = schedulerFor(env, { factories: [() => provider], circuit });
      await tick(scheduler);
      await tick(scheduler); // second consecutive failure opens the circuit
      for (let i = 0; i < 3; i++) assert.equal((await tick(scheduler)).claimed.length, 0);
      assert.equal(provider.calls.length, 2);
      for (const id of ids.slice(2)) {
        const { record } = await read(env.store, id);
        assert.equal(record.status, 'QUEUED');
        assert.equal(record.attempts, 0);
      }
      healthy = true;
      env.clock.advance(10_000); // half-open: one probe, which succeeds and closes it
      await drain(scheduler);
      for (const id of ids.slice(2)) {
        const { record } = await read(env.store, id);
        assert.equal(record.status, 'SENT');
        assert.equal(record.attempts, 1);
      }
    });

    it('reopens for longer only when the half-open probe fails, not for sends that failed after it opened', async () => {
      const env = await fresh();
      let healthy = false;
      // The first four sends fail together, once all four are out (a provider that refuses
      // slowly): the second failure opens the circuit, the other two arrive after it.
      let started = 0;
      let releaseAll = () => {};
      const allOut = new Promise<void>((resolve) => {
        releaseAll = resolve;
      });
      const provider = scriptedProvider('email', async () => {
        if (healthy) return { ok: true };
        if (++started === 4) releaseAll();
        await allOut;
        return { ok: false, kind: 'transient', detail: '503 unavailable' };
      });
      await seedMany(
        env.store,
        Array.from({ length: 4 }, () => newNotification()),
      );
      const scheduler = schedulerFor(env, { factories: [() => provider], circuit });
      await tick(scheduler);
      assert.equal(provider.calls.length, 4);
      await seedMany(env.store, [newNotification()]);
      assert.equal((await tick(scheduler)).claimed.length, 0, 'open: nothing is claimed');
      // Still the first open time (10 s), not doubled by the late failures: the probe goes out,
      // fails, and that failure reopens it for twice as long.
      env.clock.advance(10_000);
      await tick(scheduler);
      assert.equal(provider.calls.length, 5);
      env.clock.advance(10_000);
      assert.equal((await tick(scheduler)).claimed.length, 0, 'reopened for 20 s');
      healthy = true;
      env.clock.advance(10_000);
      await tick(scheduler);
      assert.equal(provider.calls.length, 6, 'the next probe, which closes it');
      await drain(scheduler);
      assert.equal(provider.calls.length, 6 + 4, 'closed again: the other four went out too');
    });

    it('pauses the provider on a configuration failure and gives the attempt back', async () => {
      const env = await fresh({ HERALD_CLAIM_BATCH: '1' });
      let configured = false;
      const provider = scriptedProvider('email', () =>
        configured ? { ok: true } : { ok: false, kind: 'config', detail: '535 authentication failed' },
      );
      const [first, second] = await seedMany(env.store, [newNotification(), newNotification()]);
      const scheduler = schedulerFor(env, { factories: [() => provider], circuit });
      await tick(scheduler);
      const held = await read(env.store, first as string);
      assert.equal(held.record.status, 'RETRYING');
      assert.equal(held.record.attempts, 0);
      assert.equal(held.events.at(-1)?.type, 'THROTTLED');
      assert.match(held.events.at(-1)?.detail ?? '', /paused \(configuration\): 535/);
      assert.equal((await tick(scheduler)).claimed.length, 0, 'the paused provider gets nothing');
      assert.equal((await read(env.store, second as string)).record.status, 'QUEUED');
      configured = true;
      env.clock.advance(30_000);
      await drain(scheduler);
      const after = await read(env.store, first as string);
      assert.equal(after.record.status, 'SENT');
      assert.equal(after.record.attempts, 1);
      assert.equal((await read(env.store, second as string)).record.status, 'SENT');
    });

    it('pauses the sandbox with the fail-config pattern', async () => {
      const env = await fresh();
      const [id] = await seedMany(env.store, [
        newNotification({ recipient: { email: 'fail-config@example.com' } }),
      ]);
      await tick(schedulerFor(env, { circuit }));
      const { record, events } = await read(env.store, id as string);
      assert.equal(record.attempts, 0);
      assert.match(events.at(-1)?.detail ?? '', /sandbox: injected configuration failure/);
    });

    it('keeps part of a provider for CRITICAL and HIGH while LOW and NORMAL sends hang', async () => {
      const env = await fresh();
      const hung: Array<() => void> = [];
      const provider = scriptedProvider('email', (message) =>
        message.priority === 'LOW' || message.priority === 'NORMAL'
          ? new Promise((resolve) => hung.push(() => resolve({ ok: true })))
          : { ok: true },
      );
      (provider as { limits: object }).limits = { concurrency: 4, ratePerSecond: 1000, burst: 1000 };
      const scheduler = schedulerFor(env, { factories: [() => provider] });
      const byPriority = (p: string) => provider.calls.filter((c) => c.priority === p).length;
      await seedMany(
        env.store,
        Array.from({ length: 50 }, () => newNotification({ priority: 'LOW' })),
      );
      await tick(scheduler);
      await tick(scheduler);
      assert.equal(byPriority('LOW'), 2, 'LOW holds at most half of the four slots');
      await seedMany(
        env.store,
        Array.from({ length: 50 }, () => newNotification({ priority: 'NORMAL' })),
      );
      await tick(scheduler);
      await tick(scheduler);
      assert.equal(byPriority('NORMAL'), 1, 'NORMAL and LOW together hold three');
      await seedMany(env.store, [
        newNotification({ priority: 'CRITICAL' }),
        newNotification({ priority: 'HIGH' }),
      ]);
      await tick(scheduler);
      assert.equal(byPriority('CRITICAL'), 1, 'the fourth slot takes CRITICAL first');
      await tick(scheduler);
      assert.equal(byPriority('HIGH'), 1, 'and HIGH once CRITICAL has answered');
      assert.equal(hung.length, 3, 'while every bulk send still hangs');
      for (const release of hung.splice(0)) release();
      await tick(scheduler);
      await tick(scheduler);
      assert.deepEqual(
        [byPriority('NORMAL'), byPriority('LOW')],
        [4, 2],
        'the freed bulk slots go to NORMAL first, all three of them',
      );
      for (const release of hung.splice(0)) release();
    });

    it('claims no more than the token bucket of the provider allows', async () => {
      const env = await fresh();
      const provider = scriptedProvider('sms', () => ({ ok: true }));
      (provider as { limits: object }).limits = { concurrency: 10, ratePerSecond: 2, burst: 2 };
      await seedMany(
        env.store,
        // HIGH: the whole rate is theirs (NORMAL and LOW keep out of the reserve, below).
        Array.from({ length: 5 }, () => newNotification({ channel: 'sms', priority: 'HIGH' })),
      );
      const scheduler = schedulerFor(env, { factories: [() => provider] });
      await tick(scheduler);
      assert.equal(provider.calls.length, 2, 'the burst');
      await tick(scheduler);
      assert.equal(provider.calls.length, 2, 'no token, nothing claimed');
      env.clock.advance(1000);
      await tick(scheduler);
      assert.equal(provider.calls.length, 4);
    });

    it('holds a notification through a paused provider with one THROTTLED event a run, and counts a hold past the cap as an attempt', async () => {
      const env = await fresh();
      const broken = scriptedProvider('email', () => ({
        ok: false,
        kind: 'config',
        detail: 'bad credentials',
      }));
      const [id] = await seedMany(env.store, [newNotification()]);
      const scheduler = schedulerFor(env, { factories: [() => broken], circuit });
      const maxHolds = env.config.dispatch.maxHolds;
      // Each tick sends once, the provider pauses itself, and the notification is held; the
      // clock then moves past the pause (and past the retry's backoff).
      for (let i = 0; i <= maxHolds + 1; i++) {
        await tick(scheduler);
        env.clock.advance(circuit.configPauseMs + 1);
      }
      assert.equal(broken.calls.length, maxHolds + 2);
      const { record, events } = await read(env.store, id as string);
      const types = events.map((e) => e.type).filter((t) => t !== 'QUEUED' && t !== 'PROCESSING');
      // maxHolds holds (one event), then an attempt counted, then a new run of holds.
      assert.deepEqual(types, ['THROTTLED', 'ATTEMPT_FAILED', 'RETRYING', 'THROTTLED']);
      assert.match(events.find((e) => e.type === 'ATTEMPT_FAILED')?.detail ?? '', /held 5 times in a row/);
      assert.equal(record.attempts, 1, 'only the counted hold used an attempt');
      assert.equal(record.holds, 1);
    });

    it('keeps a circuit per key the provider names: one failing push service holds back no other', async () => {
      const env = await fresh({ HERALD_CLAIM_BATCH: '1' });
      const scripted = scriptedProvider('push', (message) =>
        message.recipient.subscription?.endpoint.startsWith('https://down.')
          ? { ok: false, kind: 'transient', detail: 'push service answered 503: try later' }
          : { ok: true },
      );
      const provider = {
        ...scripted,
        circuitKey: (recipient: Recipient) => new URL(recipient.subscription?.endpoint ?? '').origin,
      };
      const to = (host: string) =>
        newNotification({
          channel: 'push',
          recipient: {
            subscription: { endpoint: `https://${host}/send/1`, keys: { p256dh: 'k', auth: 'a' } },
          },
        });
      const [, , held, other] = await seedMany(env.store, [
        to('down.example'),
        to('down.example'),
        to('down.example'),
        to('up.example'),
      ]);
      const scheduler = schedulerFor(env, { factories: [() => provider], circuit });
      for (let i = 0; i < 4; i++) await tick(scheduler);
      // Two transient failures opened down.example's circuit: its third notification is held
      // without a call, while up.example's is sent.
      assert.equal(scripted.calls.length, 3);
      const heldEvents = (await read(env.store, held as string)).events;
      assert.match(heldEvents.at(-1)?.detail ?? '', /circuit open/);
      assert.equal((await read(env.store, other as string)).record.status, 'SENT');
    });
  });
