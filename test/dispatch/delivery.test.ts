import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newNotification, read, seedMany, T0 } from '../store/queue-fixtures.ts';
import { drain, schedulerFor, scriptedProvider, storeKinds, suiteStores, tick } from './harness.ts';

for (const kind of storeKinds())
  describe(`scheduler delivery (${kind})`, () => {
    const fresh = suiteStores(kind);

    it('delivers to the sandbox: rendered message stored, DELIVERED with its events', async () => {
      const env = await fresh();
      const [id] = await seedMany(env.store, [newNotification({ variables: { name: 'Ada' } })]);
      const scheduler = schedulerFor(env);
      await tick(scheduler);
      const { record, events } = await read(env.store, id as string);
      assert.equal(record.status, 'DELIVERED');
      assert.equal(record.provider, 'sandbox');
      assert.deepEqual(
        events.map((e) => e.type),
        ['PROCESSING', 'SENT', 'DELIVERED'],
      );
      const [message] = (await env.store.sandbox.list({ notificationId: id, limit: 5 })).items;
      assert.deepEqual(message?.content, { subject: 'Hi Ada', text: 'Hello Ada' });
      assert.deepEqual(message?.recipient, { email: 'ada@example.com' });
    });

    it('fails at once on a missing variable, with the renderer message as detail', async () => {
      const env = await fresh();
      const [id] = await seedMany(env.store, [newNotification({ variables: {} })]);
      const scheduler = schedulerFor(env);
      await tick(scheduler);
      const { record, events } = await read(env.store, id as string);
      assert.equal(record.status, 'FAILED');
      assert.match(events.at(-1)?.detail ?? '', /name/);
      assert.equal((await env.store.sandbox.list({ limit: 5 })).items.length, 0);
    });

    it('retries a transient failure after backoff, honouring Retry-After as a floor', async () => {
      const env = await fresh();
      let calls = 0;
      const provider = scriptedProvider('email', () =>
        ++calls === 1
          ? { ok: false, kind: 'transient', detail: '429', retryAfterMs: 60_000 }
          : { ok: true, providerMessageId: 'm-1' },
      );
      const [id] = await seedMany(env.store, [newNotification()]);
      const scheduler = schedulerFor(env, { factories: [() => provider] });
      await tick(scheduler);
      let state = await read(env.store, id as string);
      assert.equal(state.record.status, 'RETRYING');
      // random 0.5 of a 2 s first backoff would be 1 s; Retry-After asks for 60 s.
      assert.equal(state.record.nextAttemptAt, T0 + 1000 + 60_000);
      env.clock.advance(59_000);
      await tick(scheduler);
      assert.equal(calls, 1);
      env.clock.advance(1000);
      await tick(scheduler);
      state = await read(env.store, id as string);
      assert.equal(calls, 2);
      assert.equal(state.record.status, 'SENT');
      assert.equal(state.record.attempts, 2);
      assert.deepEqual(
        state.events.map((e) => e.type),
        ['PROCESSING', 'ATTEMPT_FAILED', 'RETRYING', 'PROCESSING', 'SENT'],
      );
      assert.equal(state.events[1]?.detail, '429');
    });

    it('backs off exponentially with full jitter up to the cap', async () => {
      const env = await fresh({ HERALD_RETRY_BASE_MS: '1000', HERALD_RETRY_MAX_MS: '5000' });
      const provider = scriptedProvider('email', () => ({ ok: false, kind: 'transient', detail: 'timeout' }));
      const [id] = await seedMany(env.store, [newNotification()]);
      const scheduler = schedulerFor(env, { factories: [() => provider], random: () => 0.999 });
      const delays: number[] = [];
      for (let i = 0; i < 5; i++) {
        await tick(scheduler);
        const { record } = await read(env.store, id as string);
        delays.push((record.nextAttemptAt as number) - env.clock.now());
        env.clock.set(record.nextAttemptAt as number);
      }
      assert.deepEqual(delays, [999, 1998, 3996, 4995, 4995]);
    });

    it('fails a permanent error at once and a transient one when attempts are used up', async () => {
      const env = await fresh({ HERALD_RETRY_MAX_ATTEMPTS: '3' });
      const provider = scriptedProvider('email', (m) =>
        m.recipient.email?.startsWith('bad')
          ? { ok: false, kind: 'permanent', detail: '550 no such user' }
          : { ok: false, kind: 'transient', detail: '421 try later' },
      );
      const [bad, flaky] = await seedMany(env.store, [
        newNotification({ recipient: { email: 'bad@example.com' } }),
        newNotification({ recipient: { email: 'flaky@example.com' } }),
      ]);
      const scheduler = schedulerFor(env, { factories: [() => provider] });
      for (let i = 0; i < 3; i++) {
        await tick(scheduler);
        env.clock.advance(60_000);
      }
      const b = await read(env.store, bad as string);
      assert.equal(b.record.status, 'FAILED');
      assert.equal(b.record.attempts, 1);
      assert.equal(b.events.at(-1)?.detail, '550 no such user');
      const f = await read(env.store, flaky as string);
      assert.equal(f.record.status, 'FAILED');
      assert.equal(f.record.attempts, 3);
      assert.match(f.events.at(-1)?.detail ?? '', /attempts exhausted/);
      assert.equal(provider.calls.length, 4);
    });

    it('expires instead of sending after expiresAt, and honours scheduledAt', async () => {
      const env = await fresh();
      const [expired, later] = await seedMany(env.store, [
        newNotification({ expiresAt: T0 + 500 }),
        newNotification({ scheduledAt: T0 + 10_000 }),
      ]);
      const scheduler = schedulerFor(env);
      await tick(scheduler);
      assert.equal((await read(env.store, expired as string)).record.status, 'EXPIRED');
      assert.equal((await read(env.store, later as string)).record.status, 'QUEUED');
      assert.equal(scheduler.nextDueAt(), T0 + 10_000);
      env.clock.set(T0 + 10_000);
      await tick(scheduler);
      assert.equal((await read(env.store, later as string)).record.status, 'DELIVERED');
    });

    it('lets a cancel that wins the race keep the notification out of the claim', async () => {
      const env = await fresh();
      const [a, b] = await seedMany(env.store, [newNotification(), newNotification()]);
      assert.equal(await env.store.notifications.cancel('t1', a as string, T0 + 1000), 'done');
      const scheduler = schedulerFor(env);
      await scheduler.step();
      // Claimed now: cancel loses cleanly.
      assert.equal(await env.store.notifications.cancel('t1', b as string, T0 + 1000), 'invalid_state');
      await drain(scheduler);
      assert.equal((await read(env.store, a as string)).record.status, 'CANCELLED');
      assert.equal((await read(env.store, b as string)).record.status, 'DELIVERED');
    });
  });
