// The dispatch thread commits hand-overs that queued together in one transaction
// (src/dispatch/joined-inserts.ts), on a real SQLite store.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertJoined } from '../../src/dispatch/joined-inserts.ts';
import type { Store } from '../../src/store/port/index.ts';
import type { EncodedNotification } from '../../src/store/port/notifications.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';
import { newNotification, T0 } from '../store/queue-fixtures.ts';

describe('joined inserts (one transaction for the hand-overs queued together)', () => {
  let store: Store;
  let transactions: number;
  const insertMany = (rows: EncodedNotification[], since: number) => {
    transactions += 1;
    return store.notifications.insertMany(rows, since);
  };
  before(() => {
    store = createSqliteStore(tempDir());
  });
  after(() => store.close());

  const stored = async (rows: EncodedNotification[]) => {
    const found = await Promise.all(rows.map((row) => store.notifications.get('t1', row.id)));
    return found.map((hit) => hit !== null);
  };

  it('commits them together and answers each with its own rows, a repeated key finding the earlier row', async () => {
    transactions = 0;
    const keyed = (id: string) =>
      newNotification({ id, idempotencyKey: 'order-7', requestHash: 'h1', createdAt: T0 });
    const first = [newNotification(), keyed('first-keyed')];
    const second = [keyed('second-keyed'), newNotification(), newNotification()];
    const [a, b] = await Promise.all(
      insertJoined(
        [
          { rows: first, since: T0 - 10 },
          { rows: second, since: T0 - 5 },
        ],
        insertMany,
      ),
    );
    assert.equal(transactions, 1);
    assert.deepEqual(a, [undefined, undefined]);
    assert.equal(b?.length, 3);
    assert.equal(b?.[0]?.record.id, 'first-keyed');
    assert.deepEqual(b?.slice(1), [undefined, undefined]);
    assert.deepEqual(await stored([...first, ...second.slice(1)]), [true, true, true, true]);
    assert.deepEqual(await stored([second[0] as EncodedNotification]), [false]);
  });

  it('commits each alone when the joint transaction fails, so a bad row fails only its own hand-over', async () => {
    transactions = 0;
    const taken = newNotification();
    await store.notifications.insertMany([taken], 0);
    const good = [newNotification(), newNotification()];
    // Its id is already stored: the insert fails, and with it any transaction it is part of.
    const bad = [newNotification(), { ...newNotification(), id: taken.id }];
    const later = [newNotification()];
    const outcomes = await Promise.allSettled(
      insertJoined(
        [
          { rows: good, since: 0 },
          { rows: bad, since: 0 },
          { rows: later, since: 0 },
        ],
        insertMany,
      ),
    );
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.equal(transactions, 4);
    assert.deepEqual(await stored([...good, ...later]), [true, true, true]);
    assert.deepEqual(await stored([bad[0] as EncodedNotification]), [false]);
  });
});
