import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/port/index.ts';
import { IN_TURN_KEY } from '../../src/store/postgres/broadcasts.ts';
import type { Query, Sql } from '../../src/store/postgres/connect.ts';
import { eventually } from '../helpers/eventually.ts';
import { T0 } from './queue-fixtures.ts';
import { broadcast, madeFor, newsSubscribers, people, subscribeAll } from './topics.suite.ts';

type PgStore = Store & { sql: Sql };

/** Steps `store` until it has nothing to do; the notifications it made. */
async function drain(store: Store, chunk: number): Promise<number> {
  let made = 0;
  for (let step = await store.broadcasts.step(T0 + 100, chunk); step; ) {
    made += step.made;
    step = await store.broadcasts.step(T0 + 100, chunk);
  }
  return made;
}

/**
 * A transaction on `store` that runs `lock` and then holds what it took until `release()`;
 * resolves once it is held. `ended` settles when the transaction ends: rolled back (rejected with
 * "rolled back") or committed.
 */
async function holding(
  store: PgStore,
  lock: (tx: Query) => Promise<unknown>,
  end: 'rollback' | 'commit',
): Promise<{ release: () => void; ended: Promise<unknown> }> {
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked = () => {};
  const taken = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const ended = store.sql.begin(async (tx) => {
    await lock(tx);
    locked();
    await held;
    if (end === 'rollback') throw new Error('rolled back');
  });
  await Promise.race([taken, ended]);
  return { release, ended };
}

/**
 * Two stores on one PostgreSQL database, as two worker processes open it, fanning out one
 * broadcast at once (docs/topics.md, decision record 0027): each leases the next range of the
 * snapshot and makes it in its own transaction.
 */
export function fanOutWorkersSuite(openPair: () => Promise<[PgStore, PgStore]>): void {
  describe('one broadcast fanned out by two workers (postgres)', () => {
    it('makes every notification exactly once, both workers making ranges, then DONE', async () => {
      const [a, b] = await openPair();
      const ids = await people(a, 3000);
      await a.topics.put('t1', 'news', null, T0);
      await subscribeAll(a, 'news', ids);
      const bc = broadcast();
      await a.broadcasts.create(bc);
      const [byA, byB] = await Promise.all([drain(a, 100), drain(b, 100)]);
      assert.equal(byA + byB, 3000);
      assert.ok(byA > 0 && byB > 0, `both workers made ranges: ${byA} and ${byB}`);
      assert.deepEqual(await madeFor(a, bc.id), ids, 'each subscriber exactly once');
      const done = await b.broadcasts.get('t1', bc.id);
      assert.equal(done?.status, 'DONE');
      assert.equal(done?.created, 3000);
      assert.equal(await a.broadcasts.hasWork(), false);
    });

    it('redoes a range whose worker died; a range being made holds back DONE, not the other ranges', async () => {
      const [a, b] = await openPair();
      const ids = await people(a, 1000);
      await a.topics.put('t1', 'news', null, T0);
      await subscribeAll(a, 'news', ids);
      const bc = broadcast();
      await a.broadcasts.create(bc);
      // Worker A dies while it makes its first range: its transaction rolls back, as on a kill -9.
      await a.sql.unsafe(`
        CREATE SEQUENCE dies_once;
        CREATE FUNCTION dies_once() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN IF nextval('dies_once') = 1 THEN RAISE EXCEPTION 'the worker died'; END IF; RETURN NULL; END $$;
        CREATE TRIGGER dies_once BEFORE INSERT ON notifications FOR EACH STATEMENT EXECUTE FUNCTION dies_once();`);
      await assert.rejects(a.broadcasts.step(T0 + 10, 100), /the worker died/);
      const left = await a.sql<
        { after_id: string; last_id: string }[]
      >`SELECT after_id, last_id FROM broadcast_ranges`;
      assert.deepEqual([...left], [{ after_id: '', last_id: ids[99] }], 'the dead worker left its range');
      assert.deepEqual(await madeFor(a, bc.id), []);

      // A worker making that range holds it (here a transaction that locks it): B makes every
      // other range meanwhile, and the broadcast is not DONE while that range is not made.
      const holder = await holding(a, (tx) => tx`SELECT 1 FROM broadcast_ranges FOR UPDATE`, 'rollback');
      assert.equal(await drain(b, 100), 900);
      assert.equal((await b.broadcasts.get('t1', bc.id))?.status, 'FANNING_OUT');
      assert.equal(await b.broadcasts.hasWork(), true);
      holder.release();
      await assert.rejects(holder.ended, /rolled back/);
      // Let go, the range is made once, by the next step, and the broadcast is DONE.
      assert.equal(await drain(b, 100), 100);
      assert.deepEqual(await madeFor(a, bc.id), ids);
      const done = await a.broadcasts.get('t1', bc.id);
      assert.equal(done?.status, 'DONE');
      assert.equal(done?.created, 1000);
    });

    it('makes a range asked in turn only while no other worker makes one in turn', async () => {
      const [a, b] = await openPair();
      const ids = await newsSubscribers(a, 300);
      const bc = broadcast();
      await a.broadcasts.create(bc);
      // Another worker's turn: a transaction holding the lock ranges made in turn take.
      const turn = await holding(
        a,
        (tx) => tx`SELECT pg_advisory_xact_lock(hashtextextended(${IN_TURN_KEY}, 0))`,
        'commit',
      );
      let settled = false;
      const waiting = b.broadcasts.step(T0 + 10, 100, true).finally(() => {
        settled = true;
      });
      await eventually(
        async () =>
          (
            await a.sql`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`
          ).length === 1,
        20_000,
        'the step in turn waits for the turn',
      );
      // A step not in turn (no urgent work) does not wait for it.
      assert.equal((await a.broadcasts.step(T0 + 20, 100))?.made, 100);
      assert.equal(settled, false, 'the step in turn waited');
      turn.release();
      await turn.ended;
      assert.equal((await waiting)?.made, 100);
      assert.equal(await drain(a, 100), 100);
      assert.deepEqual(await madeFor(a, bc.id), ids, 'each subscriber exactly once');
    });

    it('cancels: a range leased and not made is made by no one', async () => {
      const [a, b] = await openPair();
      const ids = await people(a, 300);
      await a.topics.put('t1', 'news', null, T0);
      await subscribeAll(a, 'news', ids);
      const bc = broadcast();
      await a.broadcasts.create(bc);
      assert.equal((await a.broadcasts.step(T0 + 10, 100))?.made, 100);
      // A range leased by a worker that died before making it.
      await a.sql`UPDATE broadcasts SET fanned_to = ${ids[199] as string} WHERE id = ${bc.id}`;
      await a.sql`INSERT INTO broadcast_ranges (broadcast_seq, after_id, last_id)
        SELECT seq, ${ids[99] as string}, ${ids[199] as string} FROM broadcasts WHERE id = ${bc.id}`;
      await b.broadcasts.cancel('t1', bc.id, T0 + 20);
      await Promise.all([drain(a, 100), drain(b, 100)]);
      assert.deepEqual(await a.broadcasts.counts('t1', bc.id), { CANCELLED: 100 });
      assert.equal((await a.sql`SELECT 1 FROM broadcast_ranges`).length, 0);
      assert.equal(await a.broadcasts.hasWork(), false);
    });
  });
}
