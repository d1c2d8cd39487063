// Issue 48, PostgreSQL: the urgent lane's cycles must not wait for a connection of the pool. Here
// the pool has one connection, and a LOW step holds it: its completion's UPDATE waits for a row
// lock another connection holds (a deterministic gate, released by the test). The CRITICAL must
// still be claimed, sent and reach SENT meanwhile. Before the lane had a connection of its own,
// its BEGIN waited for the held step's transaction to end. Nothing here is timed.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { type HeldStep, holdStep } from '../helpers/held-step.ts';
import { stopSharedPostgres } from '../helpers/postgres.ts';
import { newNotification, read, seedMany, T0 } from '../store/queue-fixtures.ts';
import { laneRig } from './lane-rig.ts';

after(() => stopSharedPostgres());

describe('the urgent lane on PostgreSQL', () => {
  it('reaches SENT while a LOW step holds the only pool connection, blocked by a lock', async () => {
    const { url, other, scheduler, low, lowSeq, close } = await laneRig('herald_urgent_connection', {
      pool: 1,
    });
    let held: HeldStep | undefined;
    try {
      // The gate: another connection locks the LOW row, so the step writing its completion
      // waits inside its transaction, on the pool's one connection.
      held = await holdStep(
        url,
        (tx) => tx`SELECT seq FROM notifications WHERE seq = ${lowSeq} FOR UPDATE`,
        () => scheduler.step(),
        other.sql,
      );

      const critical = newNotification({ priority: 'CRITICAL', createdAt: T0 + 1 });
      await seedMany(other, [critical]);
      scheduler.claimUrgent();
      await eventually(
        async () => (await read(other, critical.id)).record.status === 'SENT',
        30_000,
        'the CRITICAL to reach SENT while the LOW step waits',
      );
      assert.equal(held.done(), false, 'the LOW step still waits for the lock');
      assert.equal((await read(other, low.id)).record.status, 'PROCESSING');

      await held.release();
      assert.equal((await read(other, low.id)).record.status, 'SENT');
      await scheduler.drained();
    } finally {
      // Whatever failed: open the gate, so that the held step ends before the stores close.
      await held?.close();
      await close();
    }
  });
});
