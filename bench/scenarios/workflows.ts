import { FIXED } from '../../src/config/schema.ts';
import type { Store } from '../../src/store/port/index.ts';
import { definitionKey, type NewTrigger } from '../../src/store/port/workflow-runs.ts';
import { createPostgresStore } from '../../src/store/postgres/index.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import type { WorkflowRecord } from '../../src/workflows/model.ts';
import { newTrigger, workflowRecord } from '../../test/helpers/workflow-fixtures.ts';
import type { Engine } from '../lib/deploy.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { postgresDatabase } from '../lib/postgres.ts';
import { measured, type Row } from '../lib/report.ts';
import { tempDir } from '../lib/tmp.ts';
import type { Scenario } from './types.ts';

const SCENARIO = 'workflows';
const T0 = Date.UTC(2026, 0, 1);
/** Runs one trigger makes while seeding (a trigger's most). */
const PER_TRIGGER = 1000;

const workflow = (key: string, steps: WorkflowRecord['steps']): WorkflowRecord =>
  workflowRecord(key, steps, 1, T0);

const trigger = (w: WorkflowRecord, id: string, variables: object | null = null): NewTrigger =>
  newTrigger(w, 'default', {
    id,
    variables: variables === null ? null : JSON.stringify(variables),
    createdAt: T0,
  });

/**
 * Workflow runs at the store's level (the engine's own turns: `advance` with the engine's chunk
 * for that store, 500 runs on SQLite's one writer, 1,000 on PostgreSQL; no HTTP, no dispatch of
 * what they make), so each figure is the run machinery's alone, on a manual clock:
 * - runs resumed when their delay falls due: `resumed` runs waiting in a delay, then taken past
 *   it once due (each run one step and its end), runs a second;
 * - `digestTriggers` runs for `recipients` recipients (triggers naming every recipient) reaching a
 *   one-minute digest: the sends made once the window closes (the figure: exactly one
 *   per recipient).
 * The idle CPU with a million waiting runs, CRITICAL p99 while they fall due, and triggers
 * accepted per second over HTTP are not measured here yet (docs/decisions/0030-workflow-run-engine.md).
 */
async function workflowsOn(engine: Engine, options: BenchOptions): Promise<Row[]> {
  const s = options.sizes.workflows;
  const scenario = engine === 'sqlite' ? SCENARIO : `${SCENARIO}-postgres`;
  const store: Store =
    engine === 'sqlite'
      ? createSqliteStore(tempDir('workflows'))
      : await createPostgresStore(await postgresDatabase());
  const chunk = engine === 'sqlite' ? FIXED.fanOutChunk.oneWriter : FIXED.fanOutChunk.sharedStore;
  const where = engine === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  try {
    const delayed = workflow('delayed', [{ type: 'delay', for: 'PT1M' }]);
    const digest = workflow('digest', [
      { type: 'digest', for: 'PT1M' },
      { type: 'send', channel: 'inapp', content: { title: 'Digest', body: '{{ digest.count }}' } },
    ]);
    const definitions = new Map(
      [delayed, digest].map((w) => [definitionKey('default', w.key, w.version), w] as const),
    );
    const drain = async (now: number) => {
      let runs = 0;
      for (;;) {
        const step = await store.workflowRuns.advance(now, chunk, definitions);
        runs += step.advanced;
        if (step.advanced === 0) return runs;
      }
    };

    progress(`${scenario}: seeding ${s.resumed.toLocaleString('en-US')} runs into a delay`);
    for (let i = 0; i < s.resumed; i += PER_TRIGGER) {
      const runs = Array.from({ length: Math.min(PER_TRIGGER, s.resumed - i) }, (_, k) => ({
        id: `d-${i + k}`,
        recipientId: `r${(i + k) % 1000}`,
      }));
      await store.workflowRuns.trigger(trigger(delayed, `dt-${i}`), runs, 0);
    }
    await drain(T0);
    progress(`${scenario}: the delays fall due`);
    const started = process.hrtime.bigint();
    const resumed = await drain(T0 + 60_000);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;

    progress(`${scenario}: ${s.digestTriggers.toLocaleString('en-US')} runs into a one-minute digest`);
    // Each trigger names every recipient (as one event for all of them): digestTriggers runs in
    // digestTriggers / recipients commits, each run with variables of its own trigger.
    for (let i = 0; i < s.digestTriggers; i += s.recipients) {
      const runs = Array.from({ length: s.recipients }, (_, k) => ({
        id: `g-${i + k}`,
        recipientId: `p${k}`,
      }));
      await store.workflowRuns.trigger(trigger(digest, `gt-${i}`, { n: i }), runs, 0);
    }
    await drain(T0);
    await drain(T0 + 60_000);
    const sends = (await store.notifications.list('default', {}, s.recipients + 1)).items.length;
    return [
      measured(
        scenario,
        `runs resumed when their delay falls due, ${where} (store level)`,
        resumed / seconds,
        'runs/s',
        {
          // Issue 52's target is SQLite's; on PostgreSQL the figure is reported, not judged.
          ...(engine === 'sqlite' && {
            target: { bound: 20_000, better: 'higher' as const, text: '≥ 20,000 steps/s' },
          }),
          note: `${resumed.toLocaleString('en-US')} runs in ${seconds.toFixed(2)} s, turns of ${chunk}`,
        },
      ),
      measured(
        scenario,
        `sends off one per recipient, ${s.digestTriggers} runs into a 1-minute digest for ${s.recipients} recipients`,
        Math.abs(sends - s.recipients),
        'sends',
        {
          target: { bound: 0, better: 'lower', text: `exactly ${s.recipients} sends` },
          note: `${sends} sends`,
        },
      ),
    ];
  } finally {
    await store.close();
  }
}

export const workflowsScenario: Scenario = {
  name: SCENARIO,
  title: 'Workflow runs: delays falling due, and a digest of many triggers (store level)',
  run: (options) => workflowsOn('sqlite', options),
};

/** `--postgres`: the same on PostgreSQL, in the engine's turns there. */
export const workflowsPostgresScenario: Scenario = {
  name: `${SCENARIO}-postgres`,
  title: 'Workflow runs on PostgreSQL: delays falling due, and a digest of many triggers (store level)',
  run: (options) => workflowsOn('postgres', options),
};
