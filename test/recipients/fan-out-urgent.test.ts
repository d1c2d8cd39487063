// Issue 50, decision records 0043 and 0062: while CRITICAL or HIGH work arrives (an urgent notify
// of the worker's wake-up), a broadcast's fan-out steps make URGENT_CHUNK notifications at most on
// SQLite, so a CRITICAL committed meanwhile waits for a short step; once urgent traffic stops (the
// window passed), the full chunk comes back. On PostgreSQL the steps in the window make
// URGENT_SHARED_CHUNK at most, in turn with the other workers', each followed by a rest of
// URGENT_REST times its time, so the database's CPU is left to the CRITICAL; under a steady urgent
// stream the fan-out still finishes.
// The same window as the workflow engine's turns (test/workflows/urgent-turns.test.ts), from one
// home (src/dispatch/urgent-window.ts).
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { manualClock } from '../../src/clock.ts';
import {
  URGENT_CHUNK,
  URGENT_REST,
  URGENT_SHARED_CHUNK,
  URGENT_WINDOW_MS,
} from '../../src/dispatch/urgent-window.ts';
import { createWakeup } from '../../src/notifications/wakeup.ts';
import { startFanOut } from '../../src/recipients/fan-out.ts';
import type { BroadcastStore } from '../../src/store/port/broadcasts.ts';
import type { Store } from '../../src/store/port/index.ts';
import { createPostgresStore } from '../../src/store/postgres/index.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';
import { T0 } from '../store/queue-fixtures.ts';
import { broadcast, madeFor, people, subscribeAll } from '../store/topics.suite.ts';

/** The store's full chunk and its topic's size: SQLite's 500, and on PostgreSQL above URGENT_SHARED_CHUNK. */
const SIZES = { sqlite: { chunk: 500, subscribers: 1200 }, postgres: { chunk: 2000, subscribers: 5000 } };
/** Steps taken inside the urgent window before the test moves the clock past it. */
const URGENT_STEPS = 3;
/** What each step takes on the test's clock: the fan-out rests URGENT_REST times it in the window. */
const STEP_MS = 10;

/** What the fan-out asked of one step, what it made, and the real time from the step before's end. */
interface Seen {
  chunk: number;
  inTurn: boolean;
  made: number;
  gapMs: number;
}

/** `urgent`: 'first' (a notify before the first step, the clock past the window after URGENT_STEPS), 'steady' (one before every step). */
type Urgent = 'none' | 'first' | 'steady';

/**
 * Fans out one broadcast to a topic of its SIZES with a running fan-out on `store`; answers what
 * each step was asked and made. Each step takes STEP_MS on the fan-out's clock.
 */
async function steps(store: Store, topic: string, urgent: Urgent): Promise<Seen[]> {
  const oneWriter = store.capabilities.oneWriter;
  const { chunk: full, subscribers } = SIZES[store.kind];
  const ids = await people(store, subscribers, `${topic}-`);
  await store.topics.put('t1', topic, null, T0);
  await subscribeAll(store, topic, ids);
  const b = broadcast({ topic });
  assert.equal(await store.broadcasts.create(b), 'created');
  const clock = manualClock(T0 + 1000);
  const wakeup = createWakeup();
  const seen: Seen[] = [];
  let ended = performance.now();
  // The real store, each step's request and count kept (a step of another broadcast would be a test bug).
  const broadcasts: BroadcastStore = {
    create: (x) => store.broadcasts.create(x),
    get: (tenant, id) => store.broadcasts.get(tenant, id),
    counts: (tenant, id) => store.broadcasts.counts(tenant, id),
    cancel: (tenant, id, now) => store.broadcasts.cancel(tenant, id, now),
    hasWork: () => store.broadcasts.hasWork(),
    async step(now, chunk, inTurn = false) {
      const gapMs = performance.now() - ended;
      const step = await store.broadcasts.step(now, chunk, inTurn);
      if (step) {
        assert.equal(step.broadcastId, b.id);
        seen.push({ chunk, inTurn, made: step.made, gapMs });
      }
      clock.advance(STEP_MS);
      if (urgent === 'first' && seen.length === URGENT_STEPS) clock.advance(URGENT_WINDOW_MS);
      if (urgent === 'steady') wakeup.notify(true);
      ended = performance.now();
      return step;
    },
  };
  const fanOut = startFanOut({
    broadcasts,
    clock,
    wakeup,
    pollMs: 60_000,
    log: { error: () => undefined },
    chunk: full,
    oneWriter,
  });
  // The urgent notify comes before the fan-out's first step (it runs on a later tick).
  if (urgent !== 'none') wakeup.notify(true);
  try {
    await eventually(
      async () => seen.reduce((a, s) => a + s.made, 0) === subscribers,
      20_000,
      'every subscriber made',
    );
  } finally {
    await fanOut.stop();
  }
  assert.deepEqual(await madeFor(store, b.id), ids, 'one notification each');
  return seen;
}

const made = (seen: Seen[]) => seen.map((s) => s.made);

describe('broadcast fan-out steps while urgent work arrives (sqlite: one writer)', () => {
  const store = createSqliteStore(tempDir());
  const { chunk, subscribers } = SIZES.sqlite;
  after(() => store.close());

  it('makes the full chunk a step with no urgent work', async () => {
    assert.deepEqual(made(await steps(store, 'quiet', 'none')), [chunk, chunk, subscribers - 2 * chunk]);
  });

  it('makes URGENT_CHUNK a step within URGENT_WINDOW_MS of an urgent notify, the full chunk after', async () => {
    const seen = made(await steps(store, 'urgent', 'first'));
    const short = seen.slice(0, URGENT_STEPS);
    assert.deepEqual(short, Array(URGENT_STEPS).fill(URGENT_CHUNK), `steps of ${seen.join(', ')}`);
    const left = subscribers - URGENT_STEPS * URGENT_CHUNK;
    assert.deepEqual(seen.slice(URGENT_STEPS), [chunk, left - chunk], `steps of ${seen.join(', ')}`);
  });
});

describe('broadcast fan-out steps while urgent work arrives (postgres: shared by workers)', () => {
  let store: Store;
  const { chunk, subscribers } = SIZES.postgres;
  before(async () => {
    store = await createPostgresStore(await (await sharedPostgres()).createDatabase('herald_fan_out_urgent'));
  });
  after(async () => {
    await store.close();
    await stopSharedPostgres();
  });
  /** Each step after one in the window waited out its rest (a timer: never shorter, only later under load). */
  const rested = (seen: Seen[]) => {
    for (const s of seen) assert.ok(s.gapMs >= URGENT_REST * STEP_MS - 2, `a gap of ${s.gapMs} ms`);
  };

  it('makes the full chunk a step with no urgent work, neither in turn nor resting', async () => {
    const seen = await steps(store, 'quiet', 'none');
    assert.deepEqual(made(seen), [chunk, chunk, subscribers - 2 * chunk]);
    assert.ok(seen.every((s) => !s.inTurn));
  });

  it('in the window: URGENT_SHARED_CHUNK a step, in turn, each followed by a rest of URGENT_REST times it; the full chunk after', async () => {
    const seen = await steps(store, 'urgent', 'first');
    const list = made(seen).join(', ');
    assert.deepEqual(
      seen.slice(0, URGENT_STEPS).map((s) => [s.chunk, s.inTurn, s.made]),
      Array(URGENT_STEPS).fill([URGENT_SHARED_CHUNK, true, URGENT_SHARED_CHUNK]),
      `steps of ${list}`,
    );
    rested(seen.slice(1, URGENT_STEPS));
    const left = subscribers - URGENT_STEPS * URGENT_SHARED_CHUNK;
    assert.deepEqual(made(seen.slice(URGENT_STEPS)), [chunk, left - chunk], `steps of ${list}`);
    assert.ok(seen.slice(URGENT_STEPS).every((s) => !s.inTurn));
  });

  it('still finishes under a steady urgent stream: URGENT_SHARED_CHUNK a step, in turn, each after its rest', async () => {
    const seen = await steps(store, 'steady', 'steady');
    assert.equal(seen.length, subscribers / URGENT_SHARED_CHUNK);
    assert.ok(
      seen.every((s) => s.chunk === URGENT_SHARED_CHUNK && s.inTurn && s.made === URGENT_SHARED_CHUNK),
    );
    rested(seen.slice(1));
  });
});
