// #48, SQLite: a step, its sends and the completions it writes next run on the thread that
// commits and claims the CRITICALs, so while urgent work arrives (the urgent window, opened by a
// CRITICAL's wake-up) a step claims URGENT_STEP_CLAIMS NORMAL and LOW at most, and CRITICAL and
// HIGH as before; and a CRITICAL's claim never waits for the check phase (the steps queued there).
// A real store, wake-up and window on a manual clock.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { URGENT_STEP_CLAIMS, URGENT_WINDOW_MS, watchUrgent } from '../../src/dispatch/urgent-window.ts';
import type { Priority } from '../../src/notifications/model.ts';
import { createWakeup } from '../../src/notifications/wakeup.ts';
import { eventually } from '../helpers/eventually.ts';
import { newNotification, read, seedMany, T0 } from '../store/queue-fixtures.ts';
import { closeProviders, schedulerFor, scriptedProvider, setup } from './harness.ts';

const count = (claimed: Array<{ priority: Priority }>, priority: Priority) =>
  claimed.filter((record) => record.priority === priority).length;

describe('what a CRITICAL waits for on the dispatch thread (sqlite)', () => {
  it('claims URGENT_STEP_CLAIMS NORMAL or LOW a step within the window, every CRITICAL, and the full step after it', async () => {
    const env = await setup('sqlite');
    const wakeup = createWakeup();
    const urgentWindow = watchUrgent(wakeup, env.clock);
    const scheduler = schedulerFor(env, { urgentWindow });
    try {
      const seed = (priority: Priority, n: number, from: number) =>
        seedMany(
          env.store,
          Array.from({ length: n }, (_, i) =>
            newNotification({ priority, channel: 'sms', createdAt: T0 + from + i }),
          ),
        );
      await seed('LOW', 200, 0);
      const full = await scheduler.step();
      assert.equal(count(full.claimed, 'LOW'), 32, 'a quarter batch of LOW with no urgent work');

      await seed('CRITICAL', 20, 1000);
      await seed('NORMAL', 200, 2000);
      wakeup.notify(true); // the CRITICALs' commit
      const short = await scheduler.step();
      assert.equal(count(short.claimed, 'CRITICAL'), 20, 'every CRITICAL');
      assert.equal(count(short.claimed, 'NORMAL'), URGENT_STEP_CLAIMS);
      assert.equal(count(short.claimed, 'LOW'), 0, 'strict order: NORMAL left behind, so no LOW');

      env.clock.advance(URGENT_WINDOW_MS);
      const after = await scheduler.step();
      assert.ok(
        count(after.claimed, 'NORMAL') > URGENT_STEP_CLAIMS,
        `the full step once the window closed: ${count(after.claimed, 'NORMAL')} NORMAL`,
      );
    } finally {
      urgentWindow.stop();
      await scheduler.drained();
      await closeProviders(scheduler);
      await env.store.close();
    }
  });

  it('claims a CRITICAL at once when a completion has queued the lane behind setImmediate', async () => {
    const env = await setup('sqlite');
    let answerHigh: () => void = () => undefined;
    const highAnswered = new Promise<void>((resolve) => {
      answerHigh = resolve;
    });
    const provider = scriptedProvider('email', async (message) => {
      if (message.priority === 'HIGH') await highAnswered;
      return { ok: true, providerMessageId: `m-${message.notificationId}` };
    });
    const scheduler = schedulerFor(env, { factories: [() => provider] });
    const microtasks = async () => {
      for (let i = 0; i < 100; i++) await Promise.resolve();
    };
    try {
      await seedMany(env.store, [newNotification({ priority: 'HIGH', channel: 'email', createdAt: T0 })]);
      assert.equal((await scheduler.step()).claimed.length, 1);
      await eventually(() => provider.calls.length === 1, 10_000, 'the HIGH is at its provider');
      // The HIGH's answer: its completion queues the lane behind setImmediate (no macrotask runs
      // here, so the check phase has not come).
      answerHigh();
      await microtasks();
      assert.equal(scheduler.pending(), 1, "the HIGH's completion waits for the lane");
      const [critical] = await seedMany(env.store, [
        newNotification({ priority: 'CRITICAL', channel: 'email', createdAt: T0 + 1 }),
      ]);
      scheduler.claimUrgent(); // the CRITICAL's wake-up
      await microtasks();
      assert.equal(scheduler.inFlight(), 1, 'the CRITICAL is claimed before the check phase');
      assert.equal(scheduler.pending(), 0, "and the HIGH's completion written with it");
      assert.equal((await read(env.store, critical as string)).record.status, 'PROCESSING');
      await scheduler.drained();
    } finally {
      await closeProviders(scheduler);
      await env.store.close();
    }
  });
});
