import { startBare } from '../lib/bare.ts';
import { batch } from '../lib/bodies.ts';
import { deploy, workerNote } from '../lib/deploy.ts';
import { checkBatch } from '../lib/fill.ts';
import type { BenchOptions } from '../lib/options.ts';
import { measured, type Row } from '../lib/report.ts';
import { alternate, shedNote } from '../lib/rounds.ts';
import { median } from '../lib/stats.ts';
import type { Scenario } from './types.ts';

/**
 * Scenario 2: POST /notifications/batch with 1000 notifications a request; notifications
 * accepted per second. The bare server parsing the same body is the reference (no target).
 */
async function run(options: BenchOptions, apiOnly: boolean): Promise<Row[]> {
  const name = apiOnly ? 'batch (api only)' : 'batch';
  const { batch: sizes, rounds } = options.sizes;
  const herald = await deploy('sqlite', { roles: apiOnly ? 'auth,api' : undefined });
  const bare = await startBare();
  try {
    await checkBatch(herald.api, sizes.size, 'NORMAL');
    const load = {
      method: 'POST' as const,
      path: '/notifications/batch',
      headers: herald.api.auth,
      body: batch(sizes.size),
      connections: sizes.connections,
      timeoutSeconds: 120,
    };
    const result = await alternate(
      name,
      rounds,
      sizes.warmup,
      sizes.round,
      { ...load, urls: herald.urls },
      { ...load, urls: [bare.url] },
      { herald: 207, reference: 207 },
    );
    const perSecond = median(result.herald.map((r) => r.rps * sizes.size));
    return [
      measured(name, `notifications/s accepted (${sizes.size} a request)`, perSecond, '/s', {
        target: { bound: 150_000, better: 'higher', text: '>= 150,000/s' },
        note: `median of ${rounds} rounds, ${sizes.connections} connections; every item of a sample batch checked accepted; ${workerNote(apiOnly)}${shedNote(result)}`,
      }),
      measured(name, 'Herald p99 latency per batch', median(result.herald.map((r) => r.latency.p99)), 'ms'),
      measured(name, 'requests/s ratio to bare Fastify (same body)', median(result.ratios), 'x'),
    ];
  } finally {
    await Promise.all([herald.stop(), bare.stop()]);
  }
}

export const batchScenario: Scenario = {
  name: 'batch',
  title: '2. Batch ingest: POST /notifications/batch (npm start, every role)',
  run: (options) => run(options, false),
};

/** The same with the API alone in the process. */
export const batchApiOnlyScenario: Scenario = {
  name: 'batch-api-only',
  title: '2. Batch ingest with HERALD_ROLES=auth,api (no worker in the process)',
  run: (options) => run(options, true),
};
