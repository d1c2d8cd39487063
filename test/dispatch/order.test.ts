import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Channel, Priority } from '../../src/notifications/model.ts';
import type { OutgoingMessage } from '../../src/providers/types.ts';
import { newNotification, read, seedMany, T0 } from '../store/queue-fixtures.ts';
import { drain, schedulerFor, scriptedProvider, storeKinds, suiteStores, tick } from './harness.ts';

const CHANNELS: Channel[] = ['email', 'sms', 'push'];
const PRIORITIES: Priority[] = ['LOW', 'NORMAL', 'HIGH', 'CRITICAL'];

for (const kind of storeKinds())
  describe(`priority order and load shedding (${kind})`, () => {
    const fresh = suiteStores(kind);

    it('delivers a backlog built while paused in priority order, FIFO within each priority across channels', async () => {
      const env = await fresh({ HERALD_WORKER_CONCURRENCY: '8', HERALD_CLAIM_BATCH: '4' });
      const calls: OutgoingMessage[] = [];
      const factories = CHANNELS.map(
        (c) => () =>
          scriptedProvider(
            c,
            (m) => {
              calls.push(m);
              return { ok: true };
            },
            `p-${c}`,
          ),
      );
      const scheduler = schedulerFor(env, { factories });
      await env.store.queue.setPaused({}, true, T0);
      // Interleave priorities and channels in acceptance order.
      const items = Array.from({ length: 48 }, (_, i) =>
        newNotification({
          channel: CHANNELS[i % 3] as Channel,
          priority: PRIORITIES[(i * 7) % 4] as Priority,
          createdAt: T0 + i,
        }),
      );
      await seedMany(env.store, items);
      await tick(scheduler);
      assert.equal(calls.length, 0, 'nothing is sent while everything is paused');
      await env.store.queue.setPaused({}, false, T0 + 500);
      // Order is defined at the claim (the PROCESSING event, API.md §5): sends of one claim render
      // in parallel threads and may reach their providers in any order among themselves.
      const processing: string[] = [];
      for (let i = 0; i < 100 && processing.length < 48; i++) {
        processing.push(...(await tick(scheduler)).claimed.map((n) => n.id));
      }
      await drain(scheduler);
      assert.equal(calls.length, 48);
      const expected = [...items].sort(
        (a, b) =>
          PRIORITIES.indexOf(b.priority) - PRIORITIES.indexOf(a.priority) || a.createdAt - b.createdAt,
      );
      assert.deepEqual(
        processing,
        expected.map((n) => n.id),
      );
      assert.deepEqual(calls.map((m) => m.notificationId).sort(), expected.map((n) => n.id).sort());
      const { events } = await read(env.store, items[0]?.id as string);
      assert.deepEqual(
        events.map((e) => e.type),
        ['THROTTLED', 'PROCESSING', 'SENT'],
      );
      assert.match(events[0]?.detail ?? '', /paused/);
    });

    it('processes a CRITICAL sent while 100,000 LOW wait next', async () => {
      const env = await fresh();
      const lows = Array.from({ length: 100_000 }, (_, i) =>
        newNotification({ channel: CHANNELS[i % 3] as Channel, priority: 'LOW', createdAt: T0 + i }),
      );
      await seedMany(env.store, lows);
      const scheduler = schedulerFor(env);
      await tick(scheduler); // LOW is flowing
      const [critical] = await seedMany(env.store, [
        newNotification({ channel: 'sms', priority: 'CRITICAL', createdAt: T0 + 200_000 }),
      ]);
      const next = await scheduler.step();
      assert.equal(next.claimed[0]?.id, critical);
      await tick(scheduler);
      assert.equal((await read(env.store, critical as string)).record.status, 'DELIVERED');
    });

    it('retries a CRITICAL in the step it falls due while 5,000 scheduled LOW fell due before it', async () => {
      const env = await fresh();
      const provider = scriptedProvider('email', (m) =>
        m.priority === 'CRITICAL' && m.attempt === 1
          ? { ok: false, kind: 'transient', detail: 'timeout' }
          : { ok: true },
      );
      const scheduler = schedulerFor(env, { factories: [() => provider], random: () => 0.999 });
      const [critical] = await seedMany(env.store, [newNotification({ priority: 'CRITICAL' })]);
      await tick(scheduler);
      const retrying = (await read(env.store, critical as string)).record;
      assert.equal(retrying.status, 'RETRYING');
      const retryAt = retrying.nextAttemptAt as number;
      // A newsletter of 5,000 LOW scheduled a moment before the retry is due (5 steps' promotions).
      const lows = Array.from({ length: 5000 }, () =>
        newNotification({ tenant: 'newsletter', priority: 'LOW', scheduledAt: retryAt - 1 }),
      );
      for (let i = 0; i < lows.length; i += 1000) await seedMany(env.store, lows.slice(i, i + 1000));
      env.clock.set(retryAt);
      const step = await scheduler.step();
      assert.equal(step.claimed[0]?.id, critical);
      await tick(scheduler);
      assert.equal((await read(env.store, critical as string)).record.status, 'SENT');
    });

    it('claims a CRITICAL at once while every ordinary slot is busy with slow sends', async () => {
      const env = await fresh({ HERALD_WORKER_CONCURRENCY: '10', HERALD_CLAIM_BATCH: '100' });
      const release: Array<() => void> = [];
      const slow = scriptedProvider(
        'email',
        () => new Promise((resolve) => release.push(() => resolve({ ok: true }))),
      );
      const scheduler = schedulerFor(env, { factories: [() => slow] });
      await seedMany(env.store, [
        ...Array.from({ length: 50 }, () => newNotification({ priority: 'LOW' })),
        ...Array.from({ length: 50 }, () => newNotification({ priority: 'NORMAL' })),
        ...Array.from({ length: 50 }, () => newNotification({ priority: 'HIGH' })),
      ]);
      await tick(scheduler);
      // HIGH fills its 90 % (9 of 10); LOW and NORMAL get nothing while HIGH backs up.
      assert.equal(slow.calls.length, 9);
      assert.ok(slow.calls.every((m) => m.priority === 'HIGH'));
      await tick(scheduler);
      assert.equal(slow.calls.length, 9, 'the last slot is kept for CRITICAL');
      const [critical] = await seedMany(env.store, [newNotification({ priority: 'CRITICAL' })]);
      const result = await scheduler.step();
      assert.equal(result.claimed[0]?.id, critical);
      for (const r of release) r();
    });

    it("takes a second tenant's LOW in turn with a 5,000 LOW backlog of another, not after it", async () => {
      const env = await fresh({ HERALD_WORKER_CONCURRENCY: '64', HERALD_CLAIM_BATCH: '64' });
      const provider = scriptedProvider('email', () => ({ ok: true }));
      const scheduler = schedulerFor(env, { factories: [() => provider] });
      const flood = Array.from({ length: 5000 }, () => newNotification({ tenant: 'flood', priority: 'LOW' }));
      for (let i = 0; i < flood.length; i += 1000) await seedMany(env.store, flood.slice(i, i + 1000));
      const [last] = await seedMany(env.store, [newNotification({ tenant: 'flood', priority: 'LOW' })]);
      const later = await seedMany(
        env.store,
        Array.from({ length: 50 }, () => newNotification({ tenant: 'small', priority: 'LOW' })),
      );
      const order: string[] = [];
      for (let i = 0; i < 100 && later.some((id) => !order.includes(id)); i++) {
        order.push(...(await tick(scheduler)).claimed.map((n) => n.tenant));
      }
      // One of each in turn from the start, FIFO within each: the 50 are done within 100 claims.
      assert.deepEqual(
        order.slice(0, 100),
        Array.from({ length: 100 }, (_, i) => (i % 2 ? 'small' : 'flood')),
      );
      assert.equal((await read(env.store, flood[0]?.id as string, 'flood')).record.status, 'SENT');
      assert.equal((await read(env.store, last as string, 'flood')).record.status, 'QUEUED');
    });

    it('throttles LOW while higher priorities back up, and lets it run once they drain', async () => {
      const env = await fresh({ HERALD_WORKER_CONCURRENCY: '10', HERALD_CLAIM_BATCH: '100' });
      const provider = scriptedProvider('email', () => ({ ok: true }));
      const scheduler = schedulerFor(env, { factories: [() => provider] });
      await seedMany(env.store, [
        ...Array.from({ length: 5 }, () => newNotification({ priority: 'LOW' })),
        ...Array.from({ length: 30 }, () => newNotification({ priority: 'NORMAL' })),
      ]);
      const first = await tick(scheduler);
      // NORMAL may hold 60 % of the slots; LOW would fit in the rest but only runs when nothing backs up.
      assert.deepEqual(
        first.claimed.map((n) => n.priority),
        Array(6).fill('NORMAL'),
      );
      await drain(scheduler);
      assert.equal(provider.calls.length, 35);
      assert.equal(provider.calls.at(-1)?.priority, 'LOW');
    });
  });
