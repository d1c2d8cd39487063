// The rig of the urgent lane's PostgreSQL tests (urgent-connection, urgent-claim): a worker whose
// LOW notification was claimed and sent, its completion waiting for the next step, which the test
// then holds (test/helpers/held-step.ts) while it shows the lane going on.
import assert from 'node:assert/strict';
import { manualClock } from '../../src/clock.ts';
import { createPostgresStore } from '../../src/store/postgres/index.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { sharedPostgres } from '../helpers/postgres.ts';
import { newNotification, seedMany, T0 } from '../store/queue-fixtures.ts';
import { closeProviders, schedulerFor, scriptedProvider } from './harness.ts';

/**
 * A fresh database `name`; the worker's store (`pool` connections at most), another store that
 * seeds and reads, and a scheduler (`urgentInLane` as given) on a scripted email provider that
 * answers at once, whose first step claimed one LOW and whose send finished.
 */
export async function laneRig(name: string, options: { pool?: number; urgentInLane?: boolean } = {}) {
  const url = await (await sharedPostgres()).createDatabase(name);
  const store = await createPostgresStore(url, options.pool === undefined ? {} : { max: options.pool });
  const other = await createPostgresStore(url);
  const env = { config: testConfig(), store, clock: manualClock(T0 + 1000) };
  const provider = scriptedProvider('email', () => ({ ok: true, providerMessageId: 'm' }));
  const scheduler = schedulerFor(env, { factories: [() => provider], urgentInLane: options.urgentInLane });
  const close = async () => {
    await closeProviders(scheduler);
    await store.close();
    await other.close();
  };
  try {
    const low = newNotification({ priority: 'LOW', createdAt: T0 });
    await seedMany(other, [low]);
    const first = await scheduler.step();
    assert.deepEqual(
      first.claimed.map((n) => n.id),
      [low.id],
    );
    await eventually(() => scheduler.pendingForStep() === 1, 30_000, "LOW's completion");
    return { url, other, scheduler, provider, low, lowSeq: first.claimed[0]?.seq as number, close };
  } catch (error) {
    await close();
    throw error;
  }
}
