// The dispatch thread commits hand-overs that queued together in one transaction
// (src/dispatch/joined-inserts.ts), on a real SQLite store.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { insertJoined, threadCommits } from '../../src/dispatch/joined-inserts.ts';
import type { Store } from '../../src/store/port/index.ts';
import type { EncodedNotification } from '../../src/store/port/notifications.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { openLine } from '../../src/thread-calls.ts';
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

  it('answers an urgent commit served ahead before the hand-overs queued before it begin their transaction', async () => {
    const channel = new MessageChannel();
    const { port1: parentPort, port2: childPort } = channel;
    const log: string[] = [];
    const names = new Map<string, string>();
    const tag = (rows: EncodedNotification[]) => rows.map((row) => names.get(row.id)).join();
    // As role.commit: the transaction, then the wake-up in `finally`.
    const role = {
      async commit(rows: EncodedNotification[], since: number) {
        try {
          log.push(`transaction ${tag(rows)}`);
          return await store.notifications.insertMany(rows, since);
        } finally {
          log.push(`wake-up ${tag(rows)}`);
        }
      },
    };
    const commits = threadCommits(Promise.resolve(role));
    const calls = new Map<number, string>();
    // The thread's end of the port, noting each answer as it is posted.
    const threadPort = {
      postMessage(message: { line: string; id?: number }) {
        if (message.line === 'reply') log.push(`answer ${calls.get(message.id as number)}`);
        childPort.postMessage(message);
      },
      on: (event: 'message', listener: (message: unknown) => void) => childPort.on(event, listener),
    };
    openLine(
      threadPort,
      { insert: commits.joined((r) => r.commit), insertUrgent: commits.alone((r) => r.commit) },
      { drain: () => receiveMessageOnPort(childPort), ahead: ['insertUrgent'] },
    );
    interface Thread {
      insert(rows: EncodedNotification[], since: number): Promise<unknown>;
      insertUrgent(rows: EncodedNotification[], since: number): Promise<unknown>;
    }
    const main = openLine<Thread>(parentPort, {});
    const row = (name: string, priority: 'LOW' | 'CRITICAL', i: number) => {
      const n = newNotification({ priority, createdAt: T0 + i });
      names.set(n.id, name);
      return n;
    };
    const low1 = [row('low1', 'LOW', 1)];
    const low2 = [row('low2', 'LOW', 2)];
    const critical = [row('critical', 'CRITICAL', 3)];
    // Call ids follow the order of the calls: 1, 2, 3.
    ['low1', 'low2', 'critical'].forEach((name, i) => {
      calls.set(i + 1, name);
    });
    try {
      await Promise.all([
        main.call('insert', low1, T0),
        main.call('insert', low2, T0),
        main.call('insertUrgent', critical, T0),
      ]);
      assert.deepEqual(log, [
        'transaction critical',
        'wake-up critical',
        'answer critical',
        'transaction low1,low2',
        'wake-up low1,low2',
        'answer low1',
        'answer low2',
      ]);
      assert.deepEqual(await stored([...low1, ...low2, ...critical]), [true, true, true]);
    } finally {
      parentPort.close();
      childPort.close();
    }
  });
});
