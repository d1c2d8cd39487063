// #48, SQLite: a step, its sends and the completions it writes next run on the thread that
// commits and claims the CRITICALs, so while urgent work arrives (the urgent window, opened by a
// CRITICAL's wake-up) a step claims URGENT_STEP_CLAIMS NORMAL and LOW at most, and CRITICAL and
// HIGH as before. A real store, wake-up and window on a manual clock.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { URGENT_STEP_CLAIMS, URGENT_WINDOW_MS, watchUrgent } from '../../src/dispatch/urgent-window.ts';
import type { Priority } from '../../src/notifications/model.ts';
import { createWakeup } from '../../src/notifications/wakeup.ts';
import { newNotification, seedMany, T0 } from '../store/queue-fixtures.ts';
import { closeProviders, schedulerFor, setup } from './harness.ts';

const count = (claimed: Array<{ priority: Priority }>, priority: Priority) =>
  claimed.filter((record) => record.priority === priority).length;

describe('short bulk steps while urgent work arrives (sqlite)', () => {
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
});
