// Issue 50 (decision record 0059): the IDs a SQLite fan-out step makes ascend in the step's row
// order, so its rows go to the right edge of the ID index rather than each to a random place in
// the step's millisecond; each ID keeps the UUIDv7 shape and is unique.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';
import { T0 } from './queue-fixtures.ts';
import { broadcast, people, subscribeAll } from './topics.suite.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('SQLite fan-out IDs', () => {
  it('makes the IDs of a step in ascending order, UUIDv7-shaped and unique', async () => {
    const store = createSqliteStore(tempDir());
    try {
      const ids = await people(store, 700);
      await store.topics.put('t1', 'news', null, T0);
      await subscribeAll(store, 'news', ids);
      const b = broadcast();
      await store.broadcasts.create(b);
      const first = await store.broadcasts.step(T0 + 10, 400);
      const second = await store.broadcasts.step(T0 + 10, 400);
      assert.equal(first?.made, 400);
      assert.equal(second?.made, 300);
      const made = store.db
        .prepare('SELECT id FROM notifications WHERE broadcast_id = ? ORDER BY seq')
        .pluck()
        .all(b.id) as string[];
      assert.equal(made.length, 700);
      assert.equal(new Set(made).size, 700);
      for (const id of made) assert.match(id, UUID_V7);
      // Both steps ran in the same millisecond: each step's IDs ascend, whatever the other's.
      for (const step of [made.slice(0, 400), made.slice(400)]) {
        assert.deepEqual(step, step.toSorted(), 'the IDs of a step ascend with their rows');
      }
    } finally {
      store.close();
    }
  });
});
