import { requireRoute } from '../lib/api.ts';
import { deploy } from '../lib/deploy.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { measured, type Row } from '../lib/report.ts';
import { seedPostgres } from './fan-out.ts';
import type { Scenario } from './types.ts';
import { PER_TRIGGER, STEPS, TRIGGERED, triggerRound } from './workflows-process.ts';

const SCENARIO = 'workflows-process-postgres';
/** Recipients (fan-out.ts's `r0000000` on, with an email address) the runs go to. */
const PEOPLE = 1000;

/**
 * The trigger round of workflows-process on PostgreSQL, in the scale-out layout (docs/scale-out.md:
 * one auth, two api processes taking the triggers, one worker stepping the new runs into their
 * delay meanwhile, on the same cores): triggers of 100 recipients each over HTTP, runs created a
 * second. The triggers of an api process are group-committed on its own pool.
 */
async function run(options: BenchOptions): Promise<Row[]> {
  const s = options.sizes.workflowsProcess;
  const herald = await deploy('postgres');
  try {
    const { api } = herald;
    progress(`${SCENARIO}: seeding ${PEOPLE} recipients`);
    await seedPostgres(herald.databaseUrl as string, PEOPLE);
    const saved = await api.request('PUT', `/workflows/${TRIGGERED}`, { steps: STEPS });
    if (saved.status !== 201)
      throw new Error(`PUT /workflows: ${saved.status} ${JSON.stringify(saved.body)}`);
    await requireRoute(api, 'GET', `/workflows/${TRIGGERED}`, undefined, 'the workflows API');
    const triggers = await triggerRound(SCENARIO, herald, options);
    const shed = triggers.shed ? `, ${triggers.shed} shed (429/503)` : '';
    return [
      measured(
        SCENARIO,
        `runs created/s, triggers of ${PER_TRIGGER} recipients over HTTP, two api processes`,
        triggers.rps * PER_TRIGGER,
        'runs/s',
        {
          target: { bound: 50_000, better: 'higher', text: '≥ 50,000/s' },
          note:
            `${Math.round(triggers.rps)} triggers/s (201), ${s.triggerConnections} connections over two api ` +
            `processes, p99 ${triggers.latency.p99} ms${shed}; one worker process steps them into their ` +
            'delay meanwhile, on the same cores',
        },
      ),
    ];
  } finally {
    await herald.stop();
  }
}

export const workflowsProcessPostgresScenario: Scenario = {
  name: SCENARIO,
  title: 'Workflow triggers over HTTP on PostgreSQL, two api processes',
  run,
};
