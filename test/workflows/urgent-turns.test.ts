// #52, decision 0036: while CRITICAL or HIGH work arrives (an urgent notify of the worker's
// wake-up), the workflow engine's turns take URGENT_CHUNK runs at most, so a CRITICAL committed
// meanwhile waits for a short turn; once urgent traffic stops, the full chunk comes back.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { manualClock } from '../../src/clock.ts';
import { URGENT_CHUNK, URGENT_WINDOW_MS } from '../../src/dispatch/urgent-window.ts';
import { notificationId } from '../../src/notifications/ids.ts';
import { createWakeup } from '../../src/notifications/wakeup.ts';
import type { AdvanceResult } from '../../src/store/port/workflow-runs.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { startWorkflowEngine } from '../../src/workflows/engine.ts';
import { tempDir } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { newTrigger } from '../helpers/workflow-fixtures.ts';

const CHUNK = 500;
const RUNS = 1200;

describe('workflow engine turns while urgent work arrives', () => {
  const store = createSqliteStore(tempDir());
  after(() => store.close());

  /** RUNS runs of a one-delay workflow, due now: each turn steps up to its size into the delay. */
  async function dueRuns(key: string, now: number): Promise<void> {
    await store.workflows.put(
      'default',
      key,
      { name: null, category: null, steps: [{ type: 'delay', for: 'PT1H' }] },
      now,
    );
    const workflow = await store.workflows.get('default', key);
    assert.ok(workflow);
    const runs = Array.from({ length: RUNS }, (_, i) => ({
      id: notificationId(now + i),
      recipientId: `r${i}`,
    }));
    await store.workflowRuns.trigger(
      newTrigger(workflow, 'default', { id: notificationId(now), createdAt: now }),
      runs,
      0,
    );
  }

  /** Runs the engine until every run waits; answers each turn's number of runs stepped. */
  async function turns(urgentFirst: boolean): Promise<number[]> {
    const clock = manualClock(Date.now());
    await dueRuns(`w${urgentFirst}`, clock.now());
    const wakeup = createWakeup();
    const sizes: number[] = [];
    const engine = startWorkflowEngine({
      runs: store.workflowRuns,
      workflows: store.workflows,
      clock,
      wakeup,
      triggered: createWakeup(),
      onAdvanced: (result: AdvanceResult) => sizes.push(result.advanced),
      pollMs: 60_000,
      log: { error: () => undefined },
      chunk: CHUNK,
    });
    // The urgent notify comes before the engine's first turn (it runs on a later tick).
    if (urgentFirst) wakeup.notify(true);
    try {
      await eventually(async () => sizes.reduce((a, b) => a + b, 0) === RUNS, 20_000, 'every run stepped');
    } finally {
      await engine.stop();
    }
    return sizes;
  }

  it('takes the full chunk with no urgent work', async () => {
    const sizes = await turns(false);
    assert.equal(sizes[0], CHUNK);
  });

  it('takes URGENT_CHUNK runs a turn within URGENT_WINDOW_MS of an urgent notify', async () => {
    // The manual clock stands still, so the whole drain is within the window.
    assert.ok(URGENT_WINDOW_MS > 0);
    const sizes = await turns(true);
    assert.ok(sizes.length >= RUNS / URGENT_CHUNK, `turns of ${sizes.join(', ')}`);
    assert.ok(
      sizes.every((n) => n <= URGENT_CHUNK),
      `a turn stepped more than ${URGENT_CHUNK}: ${sizes.join(', ')}`,
    );
  });
});
