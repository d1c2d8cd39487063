// #48: a CRITICAL or HIGH acceptance waits for no LOW commit. On SQLite ingest hands its rows to
// the dispatch thread two hand-overs at a time; the thread's side is played here by a writer that
// holds every bulk hand-over (a thread busy with them), on a real Herald's deps and SQLite store.
// The urgent flush goes out beside them, alone, and commits (the thread serves it ahead of the
// queued ones: test/dispatch/thread-calls.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createIngest } from '../../src/notifications/ingest.ts';
import type { EncodedNotification, IdempotentHit } from '../../src/store/port/notifications.ts';
import { eventually } from '../helpers/eventually.ts';
import { countRows, notificationsApp, sms } from './fixtures.ts';

describe('urgent acceptances beside held LOW hand-overs (sqlite)', () => {
  let t: Awaited<ReturnType<typeof notificationsApp>>;
  before(async () => {
    t = await notificationsApp();
  });
  after(() => t.close());

  it('commits a CRITICAL and a HIGH at once, alone, while LOW hand-overs are held and more LOW wait', async () => {
    const store = t.deps.store.notifications;
    const handed: Array<{ priorities: string[]; urgent: boolean }> = [];
    const held: Array<() => void> = [];
    const writer = (rows: EncodedNotification[], since: number, urgent?: boolean) => {
      handed.push({ priorities: rows.map((row) => row.priority), urgent: urgent === true });
      if (urgent) return store.insertMany(rows, since);
      return new Promise<Array<IdempotentHit | undefined>>((resolve, reject) => {
        held.push(() => store.insertMany(rows, since).then(resolve, reject));
      });
    };
    const ingest = createIngest({ ...t.deps, wakeup: { notify() {} }, writer });
    const low = (i: number) => ingest.accept('default', sms({ priority: 'LOW', metadata: { i } }), undefined);
    const lows = [low(0)];
    // Bounds, not timings: each acceptance's Liquid check runs in the render threads first.
    const until = (done: () => boolean, what: string) => eventually(done, 20_000, what);
    await until(() => held.length === 1, 'the first LOW handed over');
    lows.push(low(1));
    await until(() => held.length === 2, 'the second LOW handed over');
    // Two hand-overs on their way (ingest.ts flushLimits), both held: the next LOW waits for them.
    lows.push(low(2), low(3));
    await until(() => ingest.stats().pending === 2, 'two LOW waiting');
    assert.equal(held.length, 2);

    const critical = ingest.accept('default', sms({ priority: 'CRITICAL' }), undefined);
    await until(() => handed.length === 3, 'the CRITICAL handed over beside the held LOW');
    assert.equal((await critical).status, 201);
    const high = ingest.accept('default', sms({ priority: 'HIGH' }), undefined);
    await until(() => handed.length === 4, 'the HIGH handed over beside the held LOW');
    assert.equal((await high).status, 201);
    assert.equal(countRows(t.deps), 2, 'the CRITICAL and the HIGH are stored; no LOW yet');
    assert.deepEqual(handed.slice(2), [
      { priorities: ['CRITICAL'], urgent: true },
      { priorities: ['HIGH'], urgent: true },
    ]);

    const releasing = setInterval(() => {
      for (const release of held.splice(0)) release();
    }, 1);
    try {
      await ingest.drain();
    } finally {
      clearInterval(releasing);
    }
    assert.deepEqual(
      (await Promise.all(lows)).map((answer) => answer.status),
      [201, 201, 201, 201],
    );
    assert.equal(countRows(t.deps), 6);
    assert.ok(
      handed.filter((call) => !call.urgent).every((call) => call.priorities.every((p) => p === 'LOW')),
      'bulk hand-overs hold no urgent row',
    );
  });
});
