// Issue 48, PostgreSQL: each answer the urgent lane waits for reaches it through the worker's event
// loop, which a LOW drain keeps busy, so the lane's cycles wait for as few as they can. Counted
// through a proxy that reads the protocol (test/helpers/wait-counter.ts): a claim of one CRITICAL
// waits four times (BEGIN with the pauses, the CRITICAL claim, the HIGH claim, the events with
// COMMIT), the write of its completion twice (BEGIN with the completion, then the rest with
// COMMIT). With postgres.js's sql.begin, which waits for each statement: six and five. Nothing is timed.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { manualClock } from '../../src/clock.ts';
import { createPostgresStore } from '../../src/store/postgres/index.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';
import { waitCounter } from '../helpers/wait-counter.ts';
import { newNotification, read, seedMany, T0 } from '../store/queue-fixtures.ts';
import { closeProviders, schedulerFor, scriptedProvider } from './harness.ts';

after(() => stopSharedPostgres());

describe("the urgent lane's round trips on PostgreSQL", () => {
  it('claims a CRITICAL in four waits for the database and writes its completion in two', async () => {
    const url = await (await sharedPostgres()).createDatabase('herald_urgent_round_trips');
    const proxy = await waitCounter(url);
    const store = await createPostgresStore(proxy.url);
    const other = await createPostgresStore(url);
    const env = { config: testConfig(), store, clock: manualClock(T0 + 1000) };
    const provider = scriptedProvider('email', () => ({ ok: true, providerMessageId: 'm' }));
    const scheduler = schedulerFor(env, { factories: [() => provider], urgentInLane: true });
    const sendCritical = async (createdAt: number) => {
      const critical = newNotification({ priority: 'CRITICAL', createdAt });
      await seedMany(other, [critical]);
      scheduler.claimUrgent();
      await eventually(
        async () => (await read(other, critical.id)).record.status === 'SENT',
        30_000,
        'the CRITICAL to reach SENT',
      );
      await scheduler.drained();
    };
    try {
      // A first step, as the worker's loop takes at start: the lane claims only after one.
      await scheduler.step();
      // The first of each statement on a connection is described before it runs (postgres.js),
      // a wait of its own: the count starts once the lane's statements are prepared.
      await sendCritical(T0);
      proxy.reset();
      await sendCritical(T0 + 1);
      assert.deepEqual(
        { claims: proxy.waits('herald urgent claims'), writes: proxy.waits('herald urgent writes') },
        { claims: 4, writes: 2 },
      );
    } finally {
      await closeProviders(scheduler);
      await store.close();
      await other.close();
      await proxy.close();
    }
  });
});
