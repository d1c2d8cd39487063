// Issue 50, decision record 0043: while CRITICAL or HIGH work arrives (an urgent notify of the
// worker's wake-up), a broadcast's fan-out steps make URGENT_CHUNK notifications at most, so a
// CRITICAL committed meanwhile waits for a short step; once urgent traffic stops (the window
// passed), the full chunk comes back. The same rule as the workflow engine's turns
// (test/workflows/urgent-turns.test.ts), from one home (src/dispatch/urgent-window.ts).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { manualClock } from '../../src/clock.ts';
import { URGENT_CHUNK, URGENT_WINDOW_MS } from '../../src/dispatch/urgent-window.ts';
import { createWakeup } from '../../src/notifications/wakeup.ts';
import { startFanOut } from '../../src/recipients/fan-out.ts';
import type { BroadcastStore } from '../../src/store/port/broadcasts.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { T0 } from '../store/queue-fixtures.ts';
import { broadcast, madeFor, people, subscribeAll } from '../store/topics.suite.ts';

const CHUNK = 500;
const SUBSCRIBERS = 1200;
/** Steps taken inside the urgent window before the test moves the clock past it. */
const URGENT_STEPS = 3;

describe('broadcast fan-out steps while urgent work arrives', () => {
  const store = createSqliteStore(tempDir());
  after(() => store.close());

  /**
   * Fans out one broadcast to a topic of SUBSCRIBERS with a running fan-out; answers each step's
   * notifications made. `urgentFirst`: an urgent notify before the first step, and the clock
   * moved past the window after URGENT_STEPS steps.
   */
  async function steps(topic: string, urgentFirst: boolean): Promise<number[]> {
    const ids = await people(store, SUBSCRIBERS, `${topic}-`);
    await store.topics.put('t1', topic, null, T0);
    await subscribeAll(store, topic, ids);
    const b = broadcast({ topic });
    assert.equal(await store.broadcasts.create(b), 'created');
    const clock = manualClock(T0 + 1000);
    const wakeup = createWakeup();
    const made: number[] = [];
    // The real store, each step's count kept (a step of another broadcast would be a test bug).
    const broadcasts: BroadcastStore = {
      create: (x) => store.broadcasts.create(x),
      get: (tenant, id) => store.broadcasts.get(tenant, id),
      counts: (tenant, id) => store.broadcasts.counts(tenant, id),
      cancel: (tenant, id, now) => store.broadcasts.cancel(tenant, id, now),
      hasWork: () => store.broadcasts.hasWork(),
      async step(now, chunk) {
        const step = await store.broadcasts.step(now, chunk);
        if (step) {
          assert.equal(step.broadcastId, b.id);
          made.push(step.made);
        }
        if (urgentFirst && made.length === URGENT_STEPS) clock.advance(URGENT_WINDOW_MS);
        return step;
      },
    };
    const fanOut = startFanOut({
      broadcasts,
      clock,
      wakeup,
      pollMs: 60_000,
      log: { error: () => undefined },
      chunk: CHUNK,
      oneWriter: true,
    });
    // The urgent notify comes before the fan-out's first step (it runs on a later tick).
    if (urgentFirst) wakeup.notify(true);
    try {
      await eventually(
        async () => made.reduce((a, n) => a + n, 0) === SUBSCRIBERS,
        20_000,
        'every subscriber made',
      );
    } finally {
      await fanOut.stop();
    }
    assert.equal((await madeFor(store, b.id)).length, SUBSCRIBERS, 'one notification each');
    return made;
  }

  it('makes the full chunk a step with no urgent work', async () => {
    assert.deepEqual(await steps('quiet', false), [CHUNK, CHUNK, SUBSCRIBERS - 2 * CHUNK]);
  });

  it('makes URGENT_CHUNK a step within URGENT_WINDOW_MS of an urgent notify, the full chunk after', async () => {
    const made = await steps('urgent', true);
    const short = made.slice(0, URGENT_STEPS);
    assert.deepEqual(short, Array(URGENT_STEPS).fill(URGENT_CHUNK), `steps of ${made.join(', ')}`);
    const left = SUBSCRIBERS - URGENT_STEPS * URGENT_CHUNK;
    assert.deepEqual(made.slice(URGENT_STEPS), [CHUNK, left - CHUNK], `steps of ${made.join(', ')}`);
  });
});
