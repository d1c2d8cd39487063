// The status hub's catch-ups (src/notifications/stream-hub.ts) on a real SQLite store: streams
// behind the log take turns by tenant, a page each.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { systemClock } from '../../src/clock.ts';
import { createStatusHub, type StreamSubscriber } from '../../src/notifications/stream-hub.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';

describe('status hub catch-ups', () => {
  it("take turns by tenant: one tenant's twenty streams far behind delay another's by a page or two, not twenty", async () => {
    const store = createSqliteStore(tempDir());
    const now = Date.now();
    const notification = store.db.prepare(
      `INSERT INTO notifications (seq, id, tenant, channel, priority, status, recipient, created_at, updated_at)
       VALUES (?, ?, ?, 'email', 2, 'PROCESSING', '{}', ?, ?)`,
    );
    const event = store.db.prepare(
      "INSERT INTO notification_events (id, notification_seq, type, at) VALUES (?, ?, 'PROCESSING', ?)",
    );
    // 2,500 changes of `many` (three pages for each of its streams), then one of `one`.
    store.db.transaction(() => {
      for (let seq = 1; seq <= 2501; seq++) {
        notification.run(seq, `n${seq}`, seq <= 2500 ? 'many' : 'one', now, now);
        event.run(seq, seq, now);
      }
    })();
    // Counts the pages read, on the real store.
    let reads = 0;
    const read = store.statusLog.read.bind(store.statusLog);
    store.statusLog.read = (after, options) => {
      reads += 1;
      return read(after, options);
    };
    const hub = createStatusHub({
      store,
      clock: systemClock,
      log: pino({ level: 'silent' }),
      pollMs: 60_000,
    });
    try {
      const subscriber = (tenant: string): StreamSubscriber & { frames: number } => ({
        tenant,
        after: '0',
        frames: 0,
        send(bytes) {
          this.frames += bytes.toString().split('event: status\n').length - 1;
        },
        taken: () => undefined,
        closed: false,
      });
      const many = Array.from({ length: 20 }, () => subscriber('many'));
      const one = subscriber('one');
      let readsWhenOneWasLive = -1;
      const live = [
        ...many.map((s) => hub.subscribe(s)),
        hub.subscribe(one).then((stop) => {
          readsWhenOneWasLive = reads;
          return stop;
        }),
      ];
      for (const stop of await Promise.all(live)) stop();
      assert.equal(one.frames, 1);
      assert.ok(many.every((s) => s.frames === 2500));
      // Its own page, after one or two of `many`'s (whose turn it was when it came). Taken in one
      // line (FIFO by stream) it would have waited for the first page of all twenty.
      assert.ok(readsWhenOneWasLive <= 3, `${readsWhenOneWasLive} pages read before it was live`);
    } finally {
      await hub.close();
      await store.close();
    }
  });
});
