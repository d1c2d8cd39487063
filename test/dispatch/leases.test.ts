import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SendResult } from '../../src/providers/types.ts';
import { warningsDuring } from '../helpers/warnings.ts';
import { newNotification, read, seedMany } from '../store/queue-fixtures.ts';
import { schedulerFor, scriptedProvider, storeKinds, suiteStores, tick } from './harness.ts';

/** An email provider whose sends hang until their signal aborts, then fail as transient. */
const untilAborted = () =>
  scriptedProvider(
    'email',
    (_m, signal) =>
      new Promise<SendResult>((resolve) =>
        signal.addEventListener('abort', () => resolve({ ok: false, kind: 'transient', detail: 'aborted' })),
      ),
  );

for (const kind of storeKinds())
  describe(`leases (${kind})`, () => {
    const fresh = suiteStores(kind);

    it('lets another worker retry the notification of a worker that stopped mid-send', async () => {
      const env = await fresh({ HERALD_LEASE_MS: '30000' });
      const hang = scriptedProvider('email', () => new Promise<SendResult>(() => {}));
      const [id] = await seedMany(env.store, [newNotification()]);
      const a = schedulerFor(env, { owner: 'worker-a', factories: [() => hang] });
      await tick(a);
      assert.equal(hang.calls.length, 1);
      assert.equal((await read(env.store, id as string)).record.status, 'PROCESSING');
      // The process died: no completion, no renewal. The scheduler is simply never stepped again.
      const b = schedulerFor(env, { owner: 'worker-b' });
      env.clock.advance(29_000);
      assert.equal((await tick(b)).reaped, 0, 'the lease still holds');
      env.clock.advance(1_001);
      const result = await tick(b);
      assert.equal(result.reaped, 1);
      const { record, events } = await read(env.store, id as string);
      assert.equal(record.status, 'DELIVERED');
      assert.equal(record.attempts, 2);
      assert.deepEqual(
        events.map((e) => e.type),
        ['PROCESSING', 'ATTEMPT_FAILED', 'RETRYING', 'PROCESSING', 'SENT', 'DELIVERED'],
      );
      assert.match(events[1]?.detail ?? '', /lease expired/);
    });

    it('ignores the late completion of a stalled worker whose lease was taken over', async () => {
      const env = await fresh({ HERALD_LEASE_MS: '30000' });
      let finish: (result: SendResult) => void = () => {};
      const stalled = scriptedProvider(
        'email',
        () => new Promise<SendResult>((resolve) => (finish = resolve)),
      );
      const [id] = await seedMany(env.store, [newNotification()]);
      const a = schedulerFor(env, { owner: 'worker-a', factories: [() => stalled] });
      await tick(a);
      env.clock.advance(31_000);
      const b = schedulerFor(env, { owner: 'worker-b' });
      await tick(b);
      assert.equal((await read(env.store, id as string)).record.status, 'DELIVERED');
      finish({ ok: false, kind: 'permanent', detail: 'late answer' });
      await new Promise((resolve) => setImmediate(resolve));
      const late = await a.step(false);
      assert.equal(late.applied, 0);
      assert.equal(late.stale.length, 1);
      const { record, events } = await read(env.store, id as string);
      assert.equal(record.status, 'DELIVERED');
      assert.ok(!events.some((e) => e.detail === 'late answer'));
    });

    it('renews the lease of a long send so no other worker takes it', async () => {
      const env = await fresh({ HERALD_LEASE_MS: '30000' });
      let finish: (result: SendResult) => void = () => {};
      const slow = scriptedProvider('email', () => new Promise<SendResult>((resolve) => (finish = resolve)));
      const [id] = await seedMany(env.store, [newNotification()]);
      const a = schedulerFor(env, { owner: 'worker-a', factories: [() => slow] });
      const b = schedulerFor(env, { owner: 'worker-b' });
      await tick(a);
      for (let i = 0; i < 4; i++) {
        env.clock.advance(20_000);
        await a.maintainLeases();
        assert.equal((await tick(b)).reaped, 0);
      }
      finish({ ok: true, providerMessageId: 'x' });
      await new Promise((resolve) => setImmediate(resolve));
      await a.step(false);
      assert.equal((await read(env.store, id as string)).record.status, 'SENT');
    });

    it('aborts a send that outlives its lease and retries it', async () => {
      const env = await fresh({ HERALD_LEASE_MS: '30000' });
      const hang = untilAborted();
      const [id] = await seedMany(env.store, [newNotification()]);
      const a = schedulerFor(env, { factories: [() => hang] });
      await tick(a);
      env.clock.advance(30_000);
      await a.maintainLeases();
      await new Promise((resolve) => setImmediate(resolve));
      await a.step(false);
      const { record } = await read(env.store, id as string);
      assert.equal(record.status, 'RETRYING');
    });

    it("aborts at once every send a step started, and none of a later step's", async () => {
      const env = await fresh({ HERALD_LEASE_MS: '30000' });
      const warnings = await warningsDuring(async () => {
        const hang = untilAborted();
        const early = await seedMany(
          env.store,
          Array.from({ length: 20 }, () => newNotification()),
        );
        const a = schedulerFor(env, { factories: [() => hang] });
        await tick(a);
        assert.equal(hang.calls.length, 20, 'one step started all twenty');
        env.clock.advance(10_000);
        const [late] = await seedMany(env.store, [newNotification()]);
        await tick(a);
        assert.equal(hang.calls.length, 21);
        env.clock.advance(20_000);
        await a.maintainLeases();
        await new Promise((resolve) => setImmediate(resolve));
        await a.step(false);
        for (const id of early) assert.equal((await read(env.store, id)).record.status, 'RETRYING');
        assert.equal((await read(env.store, late as string)).record.status, 'PROCESSING');
      });
      assert.deepEqual(
        warnings.map((w) => w.name),
        [],
        'twenty listeners on one step signal are expected, not a leak',
      );
    });

    it('never gives one notification to two workers sharing the store', async () => {
      const env = await fresh({ HERALD_CLAIM_BATCH: '16' });
      const ids = await seedMany(
        env.store,
        Array.from({ length: 300 }, (_, i) =>
          newNotification({ channel: (['email', 'sms', 'push'] as const)[i % 3] }),
        ),
      );
      const a = schedulerFor(env, { owner: 'worker-a' });
      const b = schedulerFor(env, { owner: 'worker-b' });
      // Ticks wait for the renders (worker threads) each step started.
      for (let i = 0; i < 60; i++) await Promise.all([tick(a), tick(b)]);
      const stored = (await env.store.sandbox.list({ limit: 1000 })).items;
      assert.equal(stored.length, 300);
      assert.equal(new Set(stored.map((m) => m.notificationId)).size, 300);
      for (const id of ids.slice(0, 10)) assert.equal((await read(env.store, id)).record.attempts, 1);
    });
  });
