import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { HeraldError } from '../../src/errors.ts';
import { listenUrl } from '../../src/main.ts';
import { createGroupCommit } from '../../src/notifications/group-commit.ts';
import { holdFlushes, sendWhileHeld } from '../helpers/held-commit.ts';
import { countRows, email, notificationsApp, send, sms } from './fixtures.ts';

describe('group commit over HTTP', () => {
  let t: Awaited<ReturnType<typeof notificationsApp>>;
  let url: string;
  before(async () => {
    t = await notificationsApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    url = listenUrl(t.app);
  });
  after(() => t.close());

  it('commits concurrent requests in fewer transactions, each row readable from a fresh connection at its 201', async () => {
    const file = join(t.deps.config.dataDir, 'herald.db');
    const before = t.deps.ingest.stats();
    const n = 60;
    // Hold the commits until every request is in.
    after(holdFlushes(t.deps.store.notifications, 'insertMany', n, () => t.deps.ingest.stats().pending));
    const checks = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const response = await fetch(`${url}/notifications`, {
          method: 'POST',
          headers: { ...t.sender, 'content-type': 'application/json' },
          body: JSON.stringify(i % 2 ? email() : sms()),
        });
        assert.equal(response.status, 201);
        const { notificationId } = (await response.json()) as { notificationId: string };
        // A second, independent connection: the row is there, so the commit came first.
        const reader = new Database(file, { readonly: true, fileMustExist: true });
        try {
          return (
            reader.prepare('SELECT id FROM notifications WHERE id = ?').get(notificationId) !== undefined
          );
        } finally {
          reader.close();
        }
      }),
    );
    assert.equal(checks.filter(Boolean).length, n);
    const stats = t.deps.ingest.stats();
    assert.equal(stats.items - before.items, n);
    const transactions = stats.flushes - before.flushes;
    assert.ok(transactions < n, `${transactions} transactions for ${n} requests`);
  });
});

describe('load shedding', () => {
  let t: Awaited<ReturnType<typeof notificationsApp>>;
  before(async () => {
    t = await notificationsApp({ HERALD_INGEST_MAX_PENDING: '1' });
  });
  after(() => t.close());

  it('answers 503 with Retry-After and stores nothing while the queue is full', async () => {
    // The first commit held open, so that the next requests queue behind it.
    const { first, second, refused } = await sendWhileHeld(
      t.deps.store.notifications,
      'insertMany',
      () => t.deps.ingest.stats().pending,
      () => send(t.app, t.sender, sms()),
    );
    assert.equal(refused.statusCode, 503);
    assert.equal(refused.json().code, 'UNAVAILABLE');
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(first.statusCode, 201);
    assert.equal(second.statusCode, 201);
    assert.equal(countRows(t.deps), 2);
  });
});

describe('createGroupCommit', () => {
  it('flushes items submitted in one turn together and resolves each after the flush', async () => {
    const flushed: number[][] = [];
    const batcher = createGroupCommit<number, number>({
      flush: async (items) => {
        flushed.push(items);
        return items.map((x) => x * 10);
      },
    });
    const results = await Promise.all([1, 2, 3].map((x) => batcher.submit(x)));
    assert.deepEqual(results, [10, 20, 30]);
    assert.deepEqual(flushed, [[1, 2, 3]]);
    assert.deepEqual(batcher.stats(), { flushes: 1, items: 3, pending: 0 });
  });

  it('splits at maxBatch by weight and never runs two flushes at once', async () => {
    let running = 0;
    let maxRunning = 0;
    const sizes: number[] = [];
    const batcher = createGroupCommit<number[], number>({
      weight: (rows) => rows.length,
      maxBatch: 5,
      flush: async (items) => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await new Promise((resolve) => setTimeout(resolve, 1));
        running -= 1;
        sizes.push(items.flat().length);
        return items.map((rows) => rows.length);
      },
    });
    await Promise.all([[1, 2, 3], [4, 5], [6], [7, 8, 9, 10, 11, 12]].map((rows) => batcher.submit(rows)));
    assert.equal(maxRunning, 1);
    assert.deepEqual(sizes, [5, 1, 6]);
  });

  it('keeps up to inFlight flushes under way, later items going out while earlier ones commit, and drains them all', async () => {
    let running = 0;
    let maxRunning = 0;
    const started: number[][] = [];
    const gates: Array<() => void> = [];
    const batcher = createGroupCommit<number, number>({
      inFlight: 2,
      flush: async (items) => {
        started.push(items);
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await new Promise<void>((resolve) => gates.push(resolve));
        running -= 1;
        return items.map((x) => -x);
      },
    });
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const results: Array<Promise<number>> = [batcher.submit(1)];
    await turn();
    results.push(batcher.submit(2));
    await turn();
    results.push(batcher.submit(3)); // a third must wait: two flushes are under way
    await turn();
    assert.deepEqual(started, [[1], [2]]);
    gates.shift()?.();
    assert.equal(await results[0], -1);
    for (let i = 0; i < 5 && started.length < 3; i++) await turn();
    assert.deepEqual(started, [[1], [2], [3]]);
    const drained = batcher.drain();
    for (const open of gates.splice(0)) open();
    await drained;
    assert.deepEqual(await Promise.all(results), [-1, -2, -3]);
    assert.equal(maxRunning, 2);
    assert.deepEqual(batcher.stats(), { flushes: 3, items: 3, pending: 0 });
  });

  it('flushes an urgent item at once and alone, beside flushes under way and ahead of items waiting for them', async () => {
    const started: Array<{ items: string[]; urgent: boolean }> = [];
    const gates: Array<() => void> = [];
    const batcher = createGroupCommit<string, string>({
      inFlight: 1,
      urgency: (item) => (item.startsWith('CRITICAL') ? 2 : 0),
      flush: async (items, urgency) => {
        const urgent = urgency > 0;
        started.push({ items, urgent });
        if (!urgent) await new Promise<void>((resolve) => gates.push(resolve));
        return items.map((item) => `${item} committed`);
      },
    });
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const low = [batcher.submit('LOW 1')];
    await turn();
    // The LOW flush is under way: the next LOW items wait for it, the CRITICAL waits for nothing.
    low.push(batcher.submit('LOW 2'), batcher.submit('LOW 3'));
    const critical = batcher.submit('CRITICAL 1');
    for (let i = 0; i < 5 && started.length < 2; i++) await turn();
    assert.deepEqual(started, [
      { items: ['LOW 1'], urgent: false },
      { items: ['CRITICAL 1'], urgent: true },
    ]);
    assert.equal(await critical, 'CRITICAL 1 committed');
    gates.shift()?.();
    for (let i = 0; i < 5 && started.length < 3; i++) await turn();
    assert.deepEqual(started.slice(2), [{ items: ['LOW 2', 'LOW 3'], urgent: false }]);
    gates.shift()?.();
    await batcher.drain();
    assert.deepEqual(await Promise.all(low), ['LOW 1 committed', 'LOW 2 committed', 'LOW 3 committed']);
    assert.deepEqual(batcher.stats(), { flushes: 3, items: 4, pending: 0 });
  });

  it('flushes each urgency apart: a CRITICAL waits for no HIGH flush under way nor the HIGH waiting behind it', async () => {
    const started: Array<{ items: string[]; urgency: number }> = [];
    const gates: Array<() => void> = [];
    const batcher = createGroupCommit<string, string>({
      urgency: (item) => (item.startsWith('CRITICAL') ? 2 : item.startsWith('HIGH') ? 1 : 0),
      flush: async (items, urgency) => {
        started.push({ items, urgency });
        if (urgency < 2) await new Promise<void>((resolve) => gates.push(resolve));
        return items.map((item) => `${item} committed`);
      },
    });
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const high = [batcher.submit('HIGH 1')];
    await turn();
    high.push(batcher.submit('HIGH 2'));
    const critical = batcher.submit('CRITICAL 1');
    for (let i = 0; i < 5 && started.length < 2; i++) await turn();
    assert.deepEqual(started, [
      { items: ['HIGH 1'], urgency: 1 },
      { items: ['CRITICAL 1'], urgency: 2 },
    ]);
    assert.equal(await critical, 'CRITICAL 1 committed');
    gates.shift()?.();
    for (let i = 0; i < 5 && started.length < 3; i++) await turn();
    assert.deepEqual(started[2], { items: ['HIGH 2'], urgency: 1 });
    gates.shift()?.();
    await batcher.drain();
    assert.deepEqual(await Promise.all(high), ['HIGH 1 committed', 'HIGH 2 committed']);
  });

  it('rejects every item when the store itself fails (the batch, then each item alone) and counts no commit', async () => {
    let calls = 0;
    const batcher = createGroupCommit<number, number>({
      flush: async () => {
        calls += 1;
        throw new Error('disk full');
      },
    });
    const results = await Promise.allSettled([batcher.submit(1), batcher.submit(2)]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    assert.equal(calls, 3, 'the batch once, then each item in a transaction of its own');
    assert.equal(batcher.stats().flushes, 0);
  });

  it('refuses with UNAVAILABLE beyond maxPending, and drains what it accepted', async () => {
    const flushed: number[] = [];
    const batcher = createGroupCommit<number, void>({
      maxPending: 2,
      flush: async (items) => {
        flushed.push(...items);
        return items.map(() => undefined);
      },
    });
    const accepted = [batcher.submit(1), batcher.submit(2)];
    await assert.rejects(batcher.submit(3), (error: HeraldError) => {
      assert.equal(error.code, 'UNAVAILABLE');
      assert.equal(error.retryAfterS, 1);
      return true;
    });
    await batcher.drain();
    await Promise.all(accepted);
    assert.deepEqual(flushed, [1, 2]);
  });

  it("refuses one owner's items past half of maxPending, and still takes another owner's", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const batcher = createGroupCommit<{ owner: string; n: number }, void>({
      maxPending: 10,
      owner: (item) => item.owner,
      flush: async (items) => {
        await held;
        return items.map(() => undefined);
      },
    });
    const flood = Array.from({ length: 8 }, (_, n) => batcher.submit({ owner: 'flood', n }));
    const other = Array.from({ length: 4 }, (_, n) => batcher.submit({ owner: 'other', n }));
    const settled = await Promise.race([
      Promise.allSettled([...flood, ...other]),
      new Promise<void>((resolve) => setTimeout(resolve, 50)),
    ]);
    assert.equal(settled, undefined, 'the flush is still held');
    release();
    const floodResults = await Promise.allSettled(flood);
    const otherResults = await Promise.allSettled(other);
    // Half of maxPending: five of the flood's; the other owner's four fit in the rest (one
    // FIFO limit would have taken all eight of the flood and refused two of the other's).
    assert.deepEqual(
      floodResults.map((r) => r.status),
      [...Array<string>(5).fill('fulfilled'), ...Array<string>(3).fill('rejected')],
    );
    const refused = floodResults.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    assert.equal((refused.reason as HeraldError).code, 'UNAVAILABLE');
    assert.match((refused.reason as HeraldError).message, /your notifications/);
    assert.deepEqual(
      otherResults.map((r) => r.status),
      Array<string>(4).fill('fulfilled'),
    );
    await batcher.drain();
  });
});
