// #52 (decision 0030): two PostgreSQL workers on one database step runs at the same moment. Runs
// of one recipient reaching one digest together make one digest (the first waits, the others
// join it, none lost), and a throttle lets exactly `limit` through however the runs are shared.
// Decision 0036: a trigger committed by another process wakes a worker process's engine (NOTIFY).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Store } from '../../src/store/port/index.ts';
import { type Definitions, definitionKey, type NewTrigger } from '../../src/store/port/workflow-runs.ts';
import { createPostgresStore } from '../../src/store/postgres/index.ts';
import type { WorkflowRecord, WorkflowStep } from '../../src/workflows/model.ts';
import { tempDir } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { type HeraldProcess, startHeraldProcess } from '../helpers/herald-process.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';
import { newTrigger, workflowRecord } from '../helpers/workflow-fixtures.ts';

const T0 = Date.UTC(2026, 0, 1);
const RUNS = 40;

const workflow = (key: string, steps: WorkflowStep[]): WorkflowRecord => workflowRecord(key, steps, 1, T0);
const send: WorkflowStep = {
  type: 'send',
  channel: 'inapp',
  content: { title: 'Hi', body: '{{ digest.count }}' },
};
const digest = workflow('digest', [{ type: 'digest', for: 'PT1M' }, send]);
const throttle = workflow('throttle', [{ type: 'throttle', limit: 3, for: 'PT1H' }, send]);
const definitions: Definitions = new Map(
  [digest, throttle].map((w) => [definitionKey('default', w.key, w.version), w]),
);

const trigger = (w: WorkflowRecord, id: string, variables: object): NewTrigger =>
  newTrigger(w, 'default', { id, variables: JSON.stringify(variables), createdAt: T0 });

describe('two PostgreSQL workers stepping runs at once', () => {
  let url: string;
  let one: Store;
  let two: Store;
  let worker: HeraldProcess | undefined;
  before(async () => {
    url = await (await sharedPostgres()).createDatabase('herald_workflow_workers');
    one = await createPostgresStore(url, { max: 4 });
    two = await createPostgresStore(url, { max: 4 });
  });
  after(async () => {
    await worker?.stop(2000);
    await one.close();
    await two.close();
    await stopSharedPostgres();
  });

  /** Each run its own trigger, as RUNS requests at the same moment would make them. */
  const start = async (w: WorkflowRecord) => {
    for (let i = 0; i < RUNS; i++) {
      await one.workflowRuns.trigger(
        trigger(w, `${w.key}-${i}`, { n: i }),
        [{ id: `${w.key}-run-${i}`, recipientId: 'u1' }],
        0,
      );
    }
  };
  /** Both workers step, a run at a time each, until neither finds a due run. */
  const race = async (now: number) => {
    const worker = async (store: Store) => {
      let idle = 0;
      while (idle < 3)
        idle = (await store.workflowRuns.advance(now, 1, definitions)).advanced === 0 ? idle + 1 : 0;
    };
    await Promise.all([worker(one), worker(two)]);
  };
  const statuses = async (w: WorkflowRecord) => {
    const runs = await one.workflowRuns.list('default', { workflow: w.key }, { limit: RUNS + 1 });
    const counts: Record<string, number> = {};
    for (const r of runs) counts[r.status] = (counts[r.status] ?? 0) + 1;
    return { runs, counts };
  };

  it('join one digest: one run waits, every other ends DIGESTED in it, and one notification goes', async () => {
    await start(digest);
    await race(T0);
    const { runs, counts } = await statuses(digest);
    assert.deepEqual(counts, { WAITING: 1, DIGESTED: RUNS - 1 });
    await race(T0 + 60_000);
    const owner = runs.find((r) => r.status === 'WAITING');
    const closed = await one.workflowRuns.get('default', owner?.id as string);
    assert.equal(closed?.status, 'COMPLETED');
    assert.equal(closed?.digest?.count, RUNS);
    assert.deepEqual(
      ((closed?.digest?.items ?? []) as Array<{ n: number }>).map((x) => x.n).sort((a, b) => a - b),
      Array.from({ length: RUNS }, (_, i) => i),
    );
    const sent = await one.notifications.list('default', {}, 100);
    assert.equal(sent.items.length, 1);
  });

  it('pass a throttle exactly `limit` times', async () => {
    await start(throttle);
    await race(T0);
    assert.deepEqual((await statuses(throttle)).counts, { COMPLETED: 3, THROTTLED: RUNS - 3 });
  });

  it('wake a worker process when another process commits a trigger, before its poll', {
    timeout: 120_000,
  }, async () => {
    // The poll at its bound (60 s): each run's send must be delivered well before it, twice in a
    // row, so that a poll tick cannot carry both (decision 0036).
    worker = await startHeraldProcess('workflow-wake-pg', {
      DATABASE_URL: url,
      HERALD_ROLES: 'worker',
      HERALD_DATA_DIR: tempDir('herald-workflow-wake-pg-'),
      HERALD_POLL_MS: '60000',
      LOG_LEVEL: 'warn',
    });
    const now = Date.now();
    await one.recipients.put('default', [{ id: 'w1', profile: {} }], now);
    const { workflow } = await one.workflows.put(
      'default',
      'woken',
      { name: null, category: null, steps: [{ ...send, content: { title: 'Hi', body: 'Hello' } }] },
      now,
    );
    for (const n of [1, 2]) {
      const runId = `woken-run-${n}`;
      await one.workflowRuns.trigger(
        newTrigger(workflow, 'default', { id: `woken-${n}`, createdAt: Date.now() }),
        [{ id: runId, recipientId: 'w1' }],
        0,
      );
      await eventually(
        async () => {
          const run = await one.workflowRuns.get('default', runId);
          const id = run?.status === 'COMPLETED' ? run.steps[0]?.notificationId : undefined;
          return (
            id !== undefined && (await one.notifications.get('default', id))?.record.status === 'DELIVERED'
          );
        },
        25_000,
        `trigger ${n}'s run to complete and its send to be delivered before the 60 s poll`,
        50,
      );
    }
  });
});
