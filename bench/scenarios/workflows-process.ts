import { join } from 'node:path';
import Database from 'better-sqlite3';
import { notificationId } from '../../src/notifications/ids.ts';
import { definitionKey } from '../../src/store/port/workflow-runs.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import type { WorkflowStep } from '../../src/workflows/model.ts';
import { newTrigger } from '../../test/helpers/workflow-fixtures.ts';
import { requireRoute } from '../lib/api.ts';
import { type Deployment, deploy } from '../lib/deploy.ts';
import { acceptOrShed, runLoad } from '../lib/load.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { pacedCritical } from '../lib/paced.ts';
import { threadsOf } from '../lib/proc.ts';
import { measured, type Row } from '../lib/report.ts';
import { percentile } from '../lib/stats.ts';
import { tempDir } from '../lib/tmp.ts';
import { seedSqlite } from './fan-out.ts';
import { criticalLatencies } from './isolation-latency.ts';
import type { Scenario } from './types.ts';

const SCENARIO = 'workflows-process';
/** Recipients (fan-out.ts's `r0000000` on, with an email address) the runs go to. */
const PEOPLE = 1000;
/** Recipients named by one trigger of the trigger round. */
export const PER_TRIGGER = 100;
const send: WorkflowStep = { type: 'send', channel: 'email', content: { subject: 'Hi', text: 'Hello' } };
/** The waiting runs' workflow: an hour's delay, then an email (LOW) to the sandbox. */
const WAITS = 'waits';
/** The trigger round's workflow: its runs step into the same delay. */
export const TRIGGERED = 'triggered';
export const STEPS: WorkflowStep[] = [{ type: 'delay', for: 'PT1H' }, send];

const ids = (n: number) => Array.from({ length: n }, (_, i) => `r${String(i).padStart(7, '0')}`);

/**
 * `n` runs of WAITS waiting in its delay, straight into the SQLite file before Herald starts: one
 * run made and stepped into the delay by the store itself (so its row is the engine's own), then
 * cloned by SQL with ids of its shape, recipients in turn. LOW, so their sends queue as LOW.
 */
async function seedWaiting(dataDir: string, n: number): Promise<void> {
  const store = createSqliteStore(dataDir);
  const now = Date.now();
  try {
    for (const key of [WAITS, TRIGGERED])
      await store.workflows.put('default', key, { name: null, category: null, steps: STEPS }, now);
    const waits = await store.workflows.get('default', WAITS);
    if (!waits) throw new Error('the workflow was not saved');
    await store.workflowRuns.trigger(
      newTrigger(waits, 'default', { id: notificationId(now), priority: 'LOW', createdAt: now }),
      [{ id: notificationId(now), recipientId: 'r0000000' }],
      0,
    );
    const definitions = new Map([[definitionKey('default', WAITS, waits.version), waits]]);
    if ((await store.workflowRuns.advance(now, 10, definitions)).advanced !== 1)
      throw new Error('the seed run did not step into its delay');
  } finally {
    await store.close();
  }
  seedSqlite(dataDir, PEOPLE);
  const db = new Database(join(dataDir, 'herald.db'));
  try {
    db.transaction(() => {
      const one = db.prepare(`SELECT * FROM workflow_runs WHERE workflow_key = ?`).get(WAITS) as {
        id: string;
        status: string;
      };
      if (one.status !== 'WAITING') throw new Error(`the seed run is ${one.status}, not WAITING`);
      db.prepare('DELETE FROM workflow_runs WHERE id = ?').run(one.id);
      // Ids as notificationId makes them (a time prefix, then hex): the run's own, its tail numbered.
      db.prepare(
        `WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < @n - 1)
         INSERT INTO workflow_runs (id, tenant, workflow_key, version, recipient_id, trigger_id, status,
           step_index, priority, locale, variables, digest, steps, due_at, created_at, updated_at)
         SELECT substr(@id, 1, 24) || printf('%012x', i), tenant, workflow_key, version,
           printf('r%07d', i % @people), trigger_id, status, step_index, priority, locale, variables, digest,
           steps, due_at, created_at, updated_at
         FROM s, (SELECT @id AS id, @tenant AS tenant, @workflow_key AS workflow_key, @version AS version,
           @trigger_id AS trigger_id, @status AS status, @step_index AS step_index, @priority AS priority,
           @locale AS locale, @variables AS variables, @digest AS digest, @steps AS steps, @due_at AS due_at,
           @created_at AS created_at, @updated_at AS updated_at)`,
      ).run({ ...one, n, people: PEOPLE });
    })();
  } finally {
    db.close();
  }
}

/**
 * Moves every run of WAITS to fall due at `at` (the delay's `until` and the due-time index), a
 * range of `seq` per transaction, so Herald's own writes wait for one range at most.
 */
function fallDueAt(dataDir: string, at: number): void {
  const db = new Database(join(dataDir, 'herald.db'));
  try {
    const range = db
      .prepare('SELECT min(seq) AS low, max(seq) AS high FROM workflow_runs WHERE workflow_key = ?')
      .get(WAITS) as { low: number; high: number };
    const move = db.prepare(
      `UPDATE workflow_runs SET due_at = @at, steps = json_set(steps, '$[0].until', @at)
       WHERE seq >= @from AND seq < @from + 20000 AND workflow_key = @key AND status = 'WAITING'`,
    );
    for (let from = range.low; from <= range.high; from += 20_000) move.run({ at, from, key: WAITS });
  } finally {
    db.close();
  }
}

/** A count from the SQLite file, read beside the running Herald (WAL). */
function countOf(dataDir: string, sql: string, ...params: unknown[]): number {
  const db = new Database(join(dataDir, 'herald.db'), { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare(sql)
      .pluck()
      .get(...params) as number;
  } finally {
    db.close();
  }
}

/**
 * The trigger round: triggers of PER_TRIGGER recipients (LOW) of the TRIGGERED workflow over HTTP,
 * spread over the deployment's API processes, `triggerConnections` at once.
 */
export async function triggerRound(scenario: string, herald: Deployment, options: BenchOptions) {
  const s = options.sizes.workflowsProcess;
  progress(`${scenario}: triggers of ${PER_TRIGGER} recipients over HTTP`);
  return acceptOrShed(
    await runLoad({
      urls: herald.urls,
      method: 'POST',
      path: `/workflows/${TRIGGERED}/trigger`,
      headers: herald.api.auth,
      body: JSON.stringify({ recipients: ids(PER_TRIGGER), priority: 'LOW' }),
      connections: s.triggerConnections,
      ...s.triggerRound,
    }),
    201,
    'POST /workflows/{key}/trigger',
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * Workflow runs in `npm start`'s one process (`node bin/herald.js start` on SQLite), with
 * `waiting` runs seeded in an hour's delay before it starts (1,000,000 full size, 2,000 quick):
 * - the process's CPU while idle, from /proc (every thread's schedstat) over `idleSeconds`, after
 *   `settleSeconds` of start-up; the busiest threads named;
 * - triggers of 100 recipients each over HTTP (POST /workflows/{key}/trigger, `connections` at
 *   once): runs created a second (each trigger takes its runs' first step, the delay, itself:
 *   docs/workflow-runs.md "Triggers");
 * - the waiting runs made to fall due together (their next step an email at LOW to the sandbox)
 *   and one CRITICAL every `everyMs` for `criticalMs` from just before: CRITICAL p99 from
 *   acceptance to the provider call, as the isolation scenario measures it.
 */
async function run(options: BenchOptions): Promise<Row[]> {
  const s = options.sizes.workflowsProcess;
  // The store migrates the new file itself (createSqliteStore); Herald starts on it seeded.
  const dataDir = tempDir('workflows-process');
  progress(`${SCENARIO}: seeding ${s.waiting.toLocaleString('en-US')} runs waiting in a delay`);
  let started = Date.now();
  await seedWaiting(dataDir, s.waiting);
  const seedSeconds = (Date.now() - started) / 1000;
  // HERALD_DISPATCH_TRACE=<file>: each CRITICAL's stages and the worker's event-loop delay
  // (bench/urgent-trace.ts reads it).
  const trace = process.env.HERALD_DISPATCH_TRACE;
  const herald = await deploy('sqlite', {
    dataDir,
    env: trace ? { HERALD_DISPATCH_TRACE: trace } : undefined,
  });
  const [main] = herald.processes;
  try {
    const { api } = herald;
    const pid = main?.pid as number;
    await requireRoute(api, 'GET', `/workflows/${WAITS}`, undefined, 'the workflows API');

    progress(`${SCENARIO}: idle CPU over ${s.idleSeconds} s, after ${s.settleSeconds} s of start-up`);
    await sleep(s.settleSeconds * 1000);
    const before = new Map(threadsOf(pid).map((t) => [t.tid, t]));
    started = performance.now();
    await sleep(s.idleSeconds * 1000);
    const wallMs = performance.now() - started;
    const threads = threadsOf(pid).map((t) => ({ ...t, runMs: t.runMs - (before.get(t.tid)?.runMs ?? 0) }));
    const idleMs = threads.reduce((sum, t) => sum + t.runMs, 0);
    const busiest = threads
      .sort((a, b) => b.runMs - a.runMs)
      .slice(0, 4)
      .map(
        (t) =>
          `${t.tid === String(pid) ? 'main' : `${t.name} ${t.tid}`} ${((100 * t.runMs) / wallMs).toFixed(2)}%`,
      )
      .join(', ');

    const triggers = await triggerRound(SCENARIO, herald, options);
    const made = countOf(dataDir, 'SELECT count(*) FROM workflow_runs WHERE workflow_key = ?', TRIGGERED);
    // The next round starts once no run is left RUNNING (the triggers stored theirs WAITING).
    for (
      let i = 0;
      countOf(dataDir, "SELECT count(*) FROM workflow_runs WHERE status = 'RUNNING'") > 0;
      i++
    ) {
      if (i > 600) throw new Error('the engine did not step the triggered runs within 5 minutes');
      await sleep(500);
    }

    // The waiting runs fall due together, a margin after the move (which the idle engine only
    // reads); the CRITICALs start about a second before, as their sender warms up.
    const dueAt = Date.now() + 1000 + s.waiting * 0.02;
    progress(
      `${SCENARIO}: ${s.waiting.toLocaleString('en-US')} runs fall due; CRITICAL every ${s.everyMs} ms`,
    );
    fallDueAt(dataDir, dueAt);
    const marginMs = dueAt - Date.now();
    await sleep(marginMs - 2500);
    const critical = await pacedCritical(herald.urls[0] as string, api.auth, s.everyMs, s.criticalMs);
    const windowEnd = Date.now();
    const stepped = countOf(
      dataDir,
      "SELECT count(*) FROM workflow_runs WHERE workflow_key = ? AND status <> 'WAITING'",
      WAITS,
    );
    const latencies = await criticalLatencies(api, critical);
    const p = (q: number) => percentile(latencies.values, q);
    const resumedSeconds = (windowEnd - dueAt) / 1000;
    const shed = triggers.shed ? `, ${triggers.shed} shed (429/503)` : '';
    return [
      measured(
        SCENARIO,
        `CPU of an idle npm start, ${s.waiting.toLocaleString('en-US')} runs waiting in delays`,
        (100 * idleMs) / wallMs,
        '% of a core',
        {
          target: { bound: 2, better: 'lower', text: '≤ 2%' },
          note:
            `every thread's schedstat over ${(wallMs / 1000).toFixed(1)} s, from ${s.settleSeconds} s after /health; ` +
            `busiest threads: ${busiest}; seeded in ${seedSeconds.toFixed(1)} s (SQL, before the start)`,
        },
      ),
      measured(
        SCENARIO,
        `runs created/s, triggers of ${PER_TRIGGER} recipients over HTTP`,
        triggers.rps * PER_TRIGGER,
        'runs/s',
        {
          target: { bound: 50_000, better: 'higher', text: '≥ 50,000/s' },
          note:
            `${Math.round(triggers.rps)} triggers/s (201), ${s.triggerConnections} connections, ` +
            `p99 ${triggers.latency.p99} ms${shed}; ${made.toLocaleString('en-US')} runs in the database; ` +
            'each stored already waiting in its delay (a delay-first workflow: a trigger takes that step itself)',
        },
      ),
      measured(
        SCENARIO,
        `CRITICAL p99 while ${s.waiting.toLocaleString('en-US')} runs fall due, acceptance to provider call`,
        p(99),
        'ms',
        {
          target: { bound: 10, better: 'lower', text: '≤ 10 ms' },
          note:
            `${latencies.values.length} of ${critical.sent} CRITICAL (one every ${s.everyMs} ms for ` +
            `${s.criticalMs / 1000} s from about a second before the runs fell due), p50 ${p(50)} ms, ` +
            `max ${Math.max(...latencies.values)} ms, ${latencies.unprocessed} never processed; ` +
            `${stepped.toLocaleString('en-US')} runs stepped (each an email queued LOW) in the ` +
            `${resumedSeconds.toFixed(1)} s from their due time to the window's end; the bench's move of ` +
            `their due times ended ${Math.round(marginMs)} ms before it` +
            critical.failures.map((f) => `; failure: ${f}`).join(''),
        },
      ),
    ];
  } finally {
    await herald.stop();
  }
}

export const workflowsProcessScenario: Scenario = {
  name: SCENARIO,
  title:
    'Workflow runs in npm start: idle CPU with runs waiting, triggers over HTTP, CRITICAL while runs fall due',
  run,
};
