import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { injectedFailure } from '../../src/providers/sandbox/failures.ts';
import { newNotification, read, seedMany } from '../store/queue-fixtures.ts';
import { schedulerFor, setup } from './harness.ts';

describe('sandbox failure injection', () => {
  const envs: Array<ReturnType<typeof setup>> = [];
  after(async () => {
    for (const e of envs) await e.store.close();
  });

  it('fails fail-transient-2 twice, then delivers on the third attempt', async () => {
    const env = setup();
    envs.push(env);
    const [id] = await seedMany(env.store, [
      newNotification({ recipient: { email: 'fail-transient-2@example.com' } }),
    ]);
    const scheduler = schedulerFor(env);
    for (let i = 0; i < 3; i++) {
      await scheduler.tick();
      env.clock.advance(60_000);
    }
    const { record, events } = await read(env.store, id as string);
    assert.equal(record.status, 'DELIVERED');
    assert.equal(record.attempts, 3);
    assert.equal(events.filter((e) => e.type === 'ATTEMPT_FAILED').length, 2);
    assert.equal((await env.store.sandbox.list({ notificationId: id, limit: 5 })).length, 1);
  });

  it('fails fail-permanent at once, and honours fail-retry-after-S', async () => {
    const env = setup();
    envs.push(env);
    const [permanent, later] = await seedMany(env.store, [
      newNotification({ recipient: { email: 'fail-permanent@example.com' } }),
      newNotification({
        recipient: { deviceToken: 'tok-fail-retry-after-120-abc', platform: 'fcm' },
        channel: 'push',
      }),
    ]);
    const scheduler = schedulerFor(env);
    const start = env.clock.now();
    await scheduler.tick();
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
    const env = setup({ HERALD_SANDBOX_FAILURES: 'false' });
    envs.push(env);
    const [id] = await seedMany(env.store, [
      newNotification({ recipient: { email: 'fail-permanent@example.com' } }),
    ]);
    await schedulerFor(env).tick();
    assert.equal((await read(env.store, id as string)).record.status, 'DELIVERED');
  });
});
