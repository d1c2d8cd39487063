import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { injectedFailure } from '../../src/providers/sandbox/failures.ts';
import { newNotification, read, seedMany } from '../store/queue-fixtures.ts';
import { schedulerFor, storeKinds, suiteStores, tick } from './harness.ts';

for (const kind of storeKinds())
  describe(`sandbox failure injection (${kind})`, () => {
    const fresh = suiteStores(kind);

    it('fails fail-transient-2 twice, then delivers on the third attempt', async () => {
      const env = await fresh();
      const [id] = await seedMany(env.store, [
        newNotification({ recipient: { email: 'fail-transient-2@example.com' } }),
      ]);
      const scheduler = schedulerFor(env);
      for (let i = 0; i < 3; i++) {
        await tick(scheduler);
        env.clock.advance(60_000);
      }
      const { record, events } = await read(env.store, id as string);
      assert.equal(record.status, 'DELIVERED');
      assert.equal(record.attempts, 3);
      assert.equal(events.filter((e) => e.type === 'ATTEMPT_FAILED').length, 2);
      assert.equal((await env.store.sandbox.list({ notificationId: id, limit: 5 })).items.length, 1);
    });

    it('fails fail-permanent at once, and honours fail-retry-after-S', async () => {
      const env = await fresh();
      const [permanent, later] = await seedMany(env.store, [
        newNotification({ recipient: { email: 'fail-permanent@example.com' } }),
        newNotification({
          recipient: { deviceToken: 'tok-fail-retry-after-120-abc', platform: 'fcm' },
          channel: 'push',
        }),
      ]);
      const scheduler = schedulerFor(env);
      const start = env.clock.now();
      await tick(scheduler);
      assert.equal((await read(env.store, permanent as string)).record.status, 'FAILED');
      const waiting = await read(env.store, later as string);
      assert.equal(waiting.record.status, 'RETRYING');
      assert.equal(waiting.record.nextAttemptAt, start + 120_000);
    });

    it('reads digit codes from +999 phone numbers', () => {
      assert.deepEqual(injectedFailure({ phone: '+999012000000' }, 2), {
        result: {
          ok: false,
          kind: 'transient',
          detail: 'sandbox: injected transient failure 2 of 2',
          retryAfterMs: undefined,
        },
      });
      assert.equal(injectedFailure({ phone: '+999012000000' }, 3), undefined);
      assert.equal(
        (injectedFailure({ phone: '+9990200000' }, 1) as { result: { kind: string } }).result.kind,
        'permanent',
      );
      assert.equal(
        (injectedFailure({ phone: '+9990330000' }, 1) as { result: { retryAfterMs: number } }).result
          .retryAfterMs,
        30_000,
      );
      assert.deepEqual(injectedFailure({ phone: '+9990525000' }, 1), { delayMs: 2500 });
      assert.equal(injectedFailure({ phone: '+15550101234' }, 1), undefined);
    });

    it('delivers normally when failure injection is off', async () => {
      const env = await fresh({ HERALD_SANDBOX_FAILURES: 'false' });
      const [id] = await seedMany(env.store, [
        newNotification({ recipient: { email: 'fail-permanent@example.com' } }),
      ]);
      await tick(schedulerFor(env));
      assert.equal((await read(env.store, id as string)).record.status, 'DELIVERED');
    });
  });
