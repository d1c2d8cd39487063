// Issue 50 (decision record 0054): while a broadcast fans out on SQLite, the WAL's checkpoints
// (a copy into the database file and two syncs, on the writer's thread) fall at the end of a
// fan-out step, not while urgent work arrives; the automatic one inside any commit is held back
// to a backstop meanwhile, and comes back once the fan-out is done, its WAL checkpointed.
// Seen through the WAL's frames (PRAGMA wal_checkpoint answers how many the WAL holds).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { URGENT_CHUNK } from '../../src/dispatch/urgent-window.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { AUTOCHECKPOINT_FRAMES, FAN_OUT_BACKSTOP_FRAMES } from '../../src/store/sqlite/step-checkpoints.ts';
import { tempDir } from '../helpers/config.ts';
import { T0 } from './queue-fixtures.ts';
import { broadcast, madeFor, people, subscribeAll } from './topics.suite.ts';

/** Made while urgent work arrives: their steps write well over AUTOCHECKPOINT_FRAMES of WAL. */
const URGENT_MADE = 5000;
const SUBSCRIBERS = 7000;

describe('SQLite fan-out steps and WAL checkpoints', () => {
  it('checkpoints after the steps made while urgent work arrives, not during them, and after the last', async () => {
    const store = createSqliteStore(tempDir());
    try {
      const ids = await people(store, SUBSCRIBERS);
      await store.topics.put('t1', 'news', null, T0);
      await subscribeAll(store, 'news', ids);
      const b = broadcast();
      assert.equal(await store.broadcasts.create(b), 'created');
      const { db } = store;
      const threshold = () => db.pragma('wal_autocheckpoint', { simple: true });
      /** Checkpoints the WAL; the frames it held. */
      const frames = () => (db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]?.log ?? 0;
      frames();

      let made = 0;
      const now = T0 + 1000;
      while (made < URGENT_MADE) {
        const step = await store.broadcasts.step(now + made, URGENT_CHUNK, true);
        assert.ok(step && !step.finished);
        made += step.made;
        assert.equal(threshold(), FAN_OUT_BACKSTOP_FRAMES, 'the automatic checkpoint held back');
      }
      const urgentFrames = frames();
      assert.ok(
        urgentFrames > AUTOCHECKPOINT_FRAMES,
        `no checkpoint while urgent work arrives (the WAL held ${urgentFrames} frames)`,
      );

      for (;;) {
        const step = await store.broadcasts.step(now + made, 500, false);
        assert.ok(step);
        made += step.made;
        if (step.finished) break;
      }
      assert.equal(made, SUBSCRIBERS);
      assert.equal(threshold(), AUTOCHECKPOINT_FRAMES, 'the automatic checkpoint back once done');
      // The last step checkpointed the WAL whole, so the next write starts it over.
      await store.topics.put('t1', 'other', null, now + made);
      const after = frames();
      assert.ok(after < 10, `the WAL checkpointed after the last step (${after} frames after one write)`);
      assert.deepEqual(await madeFor(store, b.id), ids, 'one notification per subscriber');
    } finally {
      await store.close();
    }
  });
});
