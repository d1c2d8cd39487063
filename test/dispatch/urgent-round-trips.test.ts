// Issue 48, PostgreSQL: each answer the urgent lane waits for reaches it through the worker's event
// loop, which a LOW drain keeps busy, so the lane's cycles wait for as few as they can. Counted
// through a proxy that reads the protocol (test/helpers/wait-counter.ts): a claim of one CRITICAL,
// no HIGH being ready, waits twice (BEGIN with the CRITICAL claim, which reads the pauses and
// finds no HIGH ready; the events with COMMIT), the write of its completion twice (BEGIN with
// the completion, then the rest with COMMIT). Before, with postgres.js's sql.begin waiting for
// each statement, the pauses read on their own and HIGH claimed: six and five. Nothing is timed.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { manualClock } from '../../src/clock.ts';
import { createPostgresStore } from '../../src/store/postgres/index.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';
import { waitCounter } from '../helpers/wait-counter.ts';
import { cycle, newNotification, read, seedMany, T0 } from '../store/queue-fixtures.ts';
import { closeProviders, schedulerFor, scriptedProvider } from './harness.ts';

after(() => stopSharedPostgres());

describe("the urgent lane's round trips on PostgreSQL", () => {
  it('claims a CRITICAL in two waits for the database and writes its completion in two', async () => {
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
        { claims: 2, writes: 2 },
      );
    } finally {
      await closeProviders(scheduler);
      await store.close();
      await other.close();
      await proxy.close();
    }
  });

  // A guard of the pipelined transaction (it passes with sql.begin too): a statement sent without
  // waiting that fails takes the whole cycle with it, the claim included, and is what the cycle throws.
  it('claims nothing when the events sent after the claim fail, and says why', async () => {
    const url = await (await sharedPostgres()).createDatabase('herald_urgent_rollback');
    const store = await createPostgresStore(url);
    try {
      const critical = newNotification({ priority: 'CRITICAL' });
      await seedMany(store, [critical]);
      await store.sql.unsafe(`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql
        AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
        CREATE TRIGGER refuse BEFORE INSERT ON notification_events
        FOR EACH STATEMENT EXECUTE FUNCTION refuse()`);
      const lane = { urgent: true, promoteLimit: 0, reapLimit: 0 } as const;
      await assert.rejects(cycle(store, lane), /refused by the test/);
      const left = (await read(store, critical.id)).record;
      assert.deepEqual([left.status, left.attempts], ['QUEUED', 0]);

      await store.sql.unsafe('DROP TRIGGER refuse ON notification_events');
      const claimed = await cycle(store, lane);
      assert.deepEqual(
        claimed.claimed.map((n) => n.id),
        [critical.id],
      );
    } finally {
      await store.close();
    }
  });
});
