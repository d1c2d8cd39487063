// Issue 50 (decision record 0037): on SQLite a fan-out step commits with synchronous=NORMAL, no
// fsync of its own (a FULL commit's wait for the disk was the largest share of a fan-out), and
// leaves the connection at FULL for acceptance. Seen through the statements the step runs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSqliteBroadcasts } from '../../src/store/sqlite/broadcasts.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import type { SqliteDb } from '../../src/store/sqlite/open.ts';
import { tempDir } from '../helpers/config.ts';
import { T0 } from './queue-fixtures.ts';
import { broadcast, madeFor, people, subscribeAll } from './topics.suite.ts';

type Statement = ReturnType<SqliteDb['prepare']>;

/** `db`, with the SQL of every statement it runs (run, get, all) written to `ran`, in order. */
function watched(db: SqliteDb, ran: string[]): SqliteDb {
  const watch = (statement: Statement, sql: string): Statement => {
    const proxy: Statement = new Proxy(statement, {
      get(target, key) {
        const value = Reflect.get(target, key);
        if (key === 'pluck' || key === 'raw') {
          return (...args: unknown[]) => {
            value.apply(target, args);
            return proxy;
          };
        }
        if (key === 'run' || key === 'get' || key === 'all') {
          return (...args: unknown[]) => {
            ran.push(sql.replace(/\s+/g, ' ').trim());
            return value.apply(target, args);
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    return proxy;
  };
  return new Proxy(db, {
    get(target, key) {
      if (key === 'prepare') return (sql: string) => watch(target.prepare(sql), sql);
      const value = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('SQLite fan-out steps and synchronous', () => {
  it('makes each chunk at synchronous=NORMAL, creates the broadcast at FULL, and leaves FULL after', async () => {
    const store = createSqliteStore(tempDir());
    try {
      const ids = await people(store, 1200);
      await store.topics.put('t1', 'news', null, T0);
      await subscribeAll(store, 'news', ids);
      const ran: string[] = [];
      const broadcasts = createSqliteBroadcasts(watched(store.db, ran));
      const b = broadcast();
      assert.equal(await broadcasts.create(b), 'created');
      const level = () => store.db.pragma('synchronous', { simple: true });
      assert.equal(level(), 2, 'FULL after the create');
      assert.equal(
        ran.some((sql) => sql.startsWith('PRAGMA synchronous')),
        false,
        'the create (an accepted broadcast, 201) commits at FULL',
      );
      let steps = 0;
      while ((await broadcasts.step(T0 + 1000 + steps, 500)) !== null) steps += 1;
      assert.equal(steps, 3);
      assert.equal(level(), 2, 'FULL again after the steps, for acceptance');
      // Each INSERT of a chunk between a switch to NORMAL and the switch back to FULL.
      let at: string | undefined;
      let inserts = 0;
      for (const sql of ran) {
        if (sql === 'PRAGMA synchronous = NORMAL' || sql === 'PRAGMA synchronous = FULL') at = sql;
        if (sql.startsWith('INSERT INTO notifications')) {
          inserts += 1;
          assert.equal(at, 'PRAGMA synchronous = NORMAL', 'a chunk made at FULL');
        }
      }
      assert.equal(inserts, 3);
      assert.equal(at, 'PRAGMA synchronous = FULL');
      assert.deepEqual(await madeFor(store, b.id), ids, 'one notification per subscriber');
    } finally {
      await store.close();
    }
  });
});
