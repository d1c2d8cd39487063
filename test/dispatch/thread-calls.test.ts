// The one call mechanism between threads (src/thread-calls.ts), over a real MessageChannel: the
// two ends behave as a thread's and its parent's do.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { HeraldError } from '../../src/errors.ts';
import { joined, type Line, openLine } from '../../src/thread-calls.ts';

interface Parent {
  write(key: string, value: number): Promise<string>;
}
interface Child {
  add(a: number, b: number): Promise<number>;
  fail(why: string): Promise<never>;
  refuse(): Promise<never>;
  busy(): Promise<never>;
  insert(rows: string[]): Promise<number>;
  insertUrgent(rows: string[]): Promise<number>;
  other(): Promise<string>;
  give(): Promise<unknown>;
  poke(n: number): void;
}

describe('thread calls', () => {
  const channels: MessageChannel[] = [];
  afterEach(() => {
    for (const { port1, port2 } of channels.splice(0)) {
      port1.close();
      port2.close();
    }
  });
  function pair(options: { joinedBatches?: string[][][]; served?: string[]; poked?: number[] } = {}) {
    const channel = new MessageChannel();
    channels.push(channel);
    const { port1: parentPort, port2: childPort } = channel;
    const parent = openLine<Child, Parent>(parentPort, {
      write: async (key, value) => `${key}=${value}`,
    });
    const child: Line<Parent> = openLine<Parent, Child>(
      childPort,
      {
        async add(a, b): Promise<number> {
          options.served?.push('add');
          // Calls the other way while answering this one: the line is two-way.
          const written = await child.call('write', 'sum', a + b);
          assert.equal(written, `sum=${a + b}`);
          return a + b;
        },
        fail: async (why) => {
          throw new TypeError(why);
        },
        refuse: async () => {
          throw new HeraldError('UNAVAILABLE', 'rendering could not get a CPU', { retryAfterS: 1 });
        },
        busy: async () => {
          throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
        },
        insert: joined((calls) => {
          options.served?.push('insert');
          options.joinedBatches?.push(calls.map(([rows]) => rows));
          return calls.map(([rows]) => Promise.resolve(rows.length));
        }),
        insertUrgent: async (rows) => {
          options.served?.push(`urgent ${rows.join()}`);
          return rows.length;
        },
        other: async () => {
          options.served?.push('other');
          return 'other';
        },
        give: async () => () => 'a function does not clone',
        poke: (n) => {
          options.poked?.push(n);
        },
      },
      { drain: () => receiveMessageOnPort(childPort), ahead: ['insertUrgent'] },
    );
    return { parent, child };
  }

  it('answers calls both ways, and tells without an answer', async () => {
    const poked: number[] = [];
    const { parent } = pair({ poked });
    parent.tell('poke', 7);
    assert.equal(await parent.call('add', 2, 3), 5);
    assert.deepEqual(poked, [7]);
    assert.equal(parent.pending(), 0);
  });

  it('rejects with the error thrown on the other side, and with an error for a method not served', async () => {
    const { parent } = pair();
    await assert.rejects(parent.call('fail', 'no such tenant'), {
      name: 'TypeError',
      message: 'no such tenant',
    });
    const unknown = parent as unknown as { call(method: string): Promise<unknown> };
    await assert.rejects(unknown.call('nothing'), /no method 'nothing' is served/);
    // Inherited names are not methods of the line.
    await assert.rejects(unknown.call('toString'), /no method 'toString' is served/);
    await assert.rejects(unknown.call('constructor'), /no method 'constructor' is served/);
  });

  it("keeps what a clone drops: a HeraldError's code and Retry-After, another error's code", async () => {
    const { parent } = pair();
    await assert.rejects(parent.call('refuse'), (error: unknown) => {
      assert.ok(error instanceof HeraldError);
      assert.equal(error.code, 'UNAVAILABLE');
      assert.equal(error.detail, 'rendering could not get a CPU');
      assert.equal(error.retryAfterS, 1);
      return true;
    });
    await assert.rejects(parent.call('busy'), { message: 'database is locked', code: 'SQLITE_BUSY' });
  });

  it('serves the calls of a joined method queued behind the first together, and what follows after them', async () => {
    const batches: string[][][] = [];
    const served: string[] = [];
    const { parent } = pair({ joinedBatches: batches, served });
    const answers = Promise.all([
      parent.call('insert', ['a']),
      parent.call('insert', ['b', 'c']),
      parent.call('insert', []),
      parent.call('other'),
      parent.call('insert', ['d']),
    ]);
    assert.deepEqual(await answers, [1, 2, 0, 'other', 1]);
    assert.deepEqual(batches, [[['a'], ['b', 'c'], []], [['d']]]);
    assert.deepEqual(served, ['insert', 'other', 'insert']);
  });

  it('serves an ahead call queued within a joined batch before the batch, alone', async () => {
    const batches: string[][][] = [];
    const served: string[] = [];
    const { parent } = pair({ joinedBatches: batches, served });
    const answers = Promise.all([
      parent.call('insert', ['a']),
      parent.call('insert', ['b']),
      parent.call('insertUrgent', ['x']),
      parent.call('insert', ['c']),
      parent.call('insertUrgent', ['y', 'z']),
      parent.call('other'),
    ]);
    assert.deepEqual(await answers, [1, 1, 1, 1, 2, 'other']);
    assert.deepEqual(served, ['urgent x', 'urgent y,z', 'insert', 'other']);
    assert.deepEqual(batches, [[['a'], ['b'], ['c']]]);
  });

  it('serves a joined method named ahead in its turn, not ahead (it would drain the calls behind it first)', async () => {
    const channel = new MessageChannel();
    channels.push(channel);
    const batches: string[][][] = [];
    openLine<Parent, Pick<Child, 'insert'>>(
      channel.port2,
      {
        insert: joined((calls) => {
          batches.push(calls.map(([rows]) => rows));
          return calls.map(([rows]) => Promise.resolve(rows.length));
        }),
      },
      { drain: () => receiveMessageOnPort(channel.port2), ahead: ['insert'] },
    );
    const parent = openLine<Pick<Child, 'insert'>>(channel.port1, {});
    assert.deepEqual(await Promise.all([parent.call('insert', ['a']), parent.call('insert', ['b'])]), [1, 1]);
    assert.deepEqual(batches, [[['a'], ['b']]]);
  });

  it('rejects every waiting call when the other side ends, and every later one at once', async () => {
    const channel = new MessageChannel();
    channels.push(channel);
    // Nobody answers on port2: the calls wait until the line is ended.
    const line = openLine<Child>(channel.port1, {});
    const waiting = line.call('other');
    assert.equal(line.pending(), 1);
    line.end(new Error('the thread ended (exit code 7)'));
    await assert.rejects(waiting, /exit code 7/);
    assert.equal(line.pending(), 0);
    await assert.rejects(line.call('other'), /exit code 7/);
    assert.equal(line.pending(), 0);
  });

  it('keeps no waiting call for a message that could not be posted, and tells the caller why', async () => {
    const { parent } = pair();
    const unclonable = (() => 1) as unknown as number;
    await assert.rejects(parent.call('add', unclonable, 1), { name: 'DataCloneError' });
    assert.equal(parent.pending(), 0);
    // An answer that cannot be cloned: the call is answered with why, not left waiting.
    await assert.rejects(parent.call('give'), /could not be cloned/);
    assert.equal(parent.pending(), 0);
  });
});
