// Issue 50 (decision record 0059): what a SQLite fan-out step writes a notification. Its IDs ascend
// in the step's row order, so its rows go to the right edge of the ID index rather than each to a
// random place in the step's millisecond; and a row holds no copy of its broadcast's content,
// variables, metadata or trace context, which every reader of the record gets from the broadcast.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NewBroadcast } from '../../src/store/port/broadcasts.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';
import { cycle, T0 } from './queue-fixtures.ts';
import { broadcast, newsSubscribers } from './topics.suite.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * A SQLite store with a topic of `n` people, each with an email address, and a broadcast to it
 * (`over` changes the broadcast), before any step.
 */
async function fanned(n: number, over: Partial<NewBroadcast> = {}) {
  const store = createSqliteStore(tempDir());
  const ids = await newsSubscribers(store, n);
  await store.recipients.put(
    't1',
    ids.map((id) => ({ id, profile: { email: `${id}@example.com` } })),
    T0,
  );
  const b = broadcast(over);
  await store.broadcasts.create(b);
  return { store, b };
}

describe('SQLite fan-out rows', () => {
  it('makes the IDs of a step in ascending order, UUIDv7-shaped and unique', async () => {
    const { store, b } = await fanned(700);
    try {
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

  it("stores no copy of the broadcast's content, and its readers and claims still see it", async () => {
    const traceContext = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const { store, b } = await fanned(3, { variables: JSON.stringify({ who: 'all' }), traceContext });
    try {
      assert.equal((await store.broadcasts.step(T0 + 10, 500))?.made, 3);
      const copies = store.db
        .prepare(
          `SELECT count(*) FROM notifications WHERE broadcast_id = ?
             AND (content IS NOT NULL OR variables IS NOT NULL OR metadata IS NOT NULL OR trace_context IS NOT NULL)`,
        )
        .pluck()
        .get(b.id);
      assert.equal(copies, 0, 'rows copying the broadcast');
      const expected = {
        content: { subject: 'Hi', text: 'News' },
        variables: { who: 'all' },
        metadata: { campaign: 7 },
        traceContext,
      };
      const [listed] = (await store.notifications.list('t1', { broadcastId: b.id }, 1)).items;
      const got = await store.notifications.get('t1', listed?.id as string);
      for (const record of [listed, got?.record]) {
        const { content, variables, metadata, traceContext: trace } = record ?? {};
        assert.deepEqual({ content, variables, metadata, traceContext: trace }, expected);
      }
      const { claimed } = await cycle(store, { now: T0 + 20 });
      assert.equal(claimed.length, 3);
      for (const { content, variables, metadata, traceContext: trace } of claimed) {
        assert.deepEqual({ content, variables, metadata, traceContext: trace }, expected);
      }
    } finally {
      store.close();
    }
  });
});
