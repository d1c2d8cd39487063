// Issue 48, PostgreSQL: a CRITICAL committed while the worker's loop runs a LOW step must not be
// claimed by that step, which would hold it (locked, its claim uncommitted) until the step's bulk
// commits. Here the LOW step is held inside its transaction after its claims: its delivery-history
// write waits for a table lock another connection holds (a deterministic gate, released by the
// test). The CRITICAL was committed before the step began, so the step's claim could take it; the
// urgent lane must claim and send it while the step is held. Before steps left CRITICAL to the
// lane, the step took it and the lane's claim skipped the locked row. Nothing here is timed.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { type HeldStep, holdStep } from '../helpers/held-step.ts';
import { stopSharedPostgres } from '../helpers/postgres.ts';
import { newNotification, read, seedMany, T0 } from '../store/queue-fixtures.ts';
import { laneRig } from './lane-rig.ts';

after(() => stopSharedPostgres());

describe("the urgent lane's claim on PostgreSQL", () => {
  it('sends a CRITICAL while the LOW step that began after its commit is held before committing', async () => {
    const { url, other, scheduler, provider, low, close } = await laneRig('herald_urgent_claim', {
      urgentInLane: true,
    });
    let held: HeldStep | undefined;
    try {
      // The CRITICAL is committed; no wake-up tells the lane yet (the test stands for it below).
      const critical = newNotification({ priority: 'CRITICAL', createdAt: T0 + 1 });
      await seedMany(other, [critical]);

      // The gate: the step that writes LOW's completion counts it into the delivery history,
      // its last statement, after its claims; that write waits for this lock.
      held = await holdStep(
        url,
        (tx) => tx`LOCK TABLE outcome_counts IN SHARE MODE`,
        () => scheduler.step(),
        other.sql,
      );

      // The wake-up of the CRITICAL's commit reaches the worker: its lane claims it.
      scheduler.claimUrgent();
      await eventually(
        () => provider.calls.some((m) => m.notificationId === critical.id),
        30_000,
        'the CRITICAL to be claimed and sent while the LOW step is held',
      );
      assert.equal(held.done(), false, 'the LOW step still waits for the lock');
      assert.equal((await read(other, low.id)).record.status, 'PROCESSING');

      await held.release();
      await scheduler.drained();
      await scheduler.step(false);
      assert.equal((await read(other, low.id)).record.status, 'SENT');
      assert.equal((await read(other, critical.id)).record.status, 'SENT');
    } finally {
      // Whatever failed: open the gate, so that the held step ends before the stores close.
      await held?.close();
      await close();
    }
  });
});
