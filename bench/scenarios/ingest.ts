import { startBare } from '../lib/bare.ts';
import { deploy, type Engine, workerNote } from '../lib/deploy.ts';
import { alternateIngest } from '../lib/ingest-rounds.ts';
import type { BenchOptions } from '../lib/options.ts';
import { postgresNote } from '../lib/postgres.ts';
import { measured, type Row } from '../lib/report.ts';
import { shedNote } from '../lib/rounds.ts';
import { median } from '../lib/stats.ts';
import type { Scenario } from './types.ts';

/**
 * Scenario 1: POST /notifications with 64 connections, one token, a 200-byte body, each 201
 * durable; the ratio to a bare Fastify 201 in alternating rounds, and Herald's p99.
 */
export async function ingestOn(engine: Engine, options: BenchOptions, apiOnly = false): Promise<Row[]> {
  const name = engine === 'postgres' ? 'ingest (postgres, 2 API)' : apiOnly ? 'ingest (api only)' : 'ingest';
  const { ingest, rounds } = options.sizes;
  const herald = await deploy(engine, {
    roles: apiOnly ? 'auth,api' : undefined,
    workers: apiOnly ? 0 : 1,
  });
  const bare = await startBare();
  try {
    const result = await alternateIngest(name, herald, bare.url, options);
    const heraldRps = median(result.herald.map((r) => r.rps));
    const bareRps = median(result.reference.map((r) => r.rps));
    const p99 = median(result.herald.map((r) => r.latency.p99));
    return [
      measured(name, 'requests/s ratio to bare Fastify', median(result.ratios), 'x', {
        // Issue 13: one process at half the bare server; two API processes on PostgreSQL at 0.4.
        target:
          engine === 'postgres'
            ? { bound: 0.4, better: 'higher', text: '>= 0.4' }
            : { bound: 0.5, better: 'higher', text: '>= 0.5' },
        note:
          `median of ${rounds} alternating rounds, ${ingest.connections} connections; per round: ` +
          `${result.ratios.map((r) => r.toFixed(3)).join(', ')}; ` +
          (engine === 'postgres' ? postgresNote(apiOnly ? 0 : 1) : workerNote(apiOnly)) +
          shedNote(result),
      }),
      measured(name, 'Herald requests/s', heraldRps, '/s'),
      measured(name, 'bare Fastify requests/s', bareRps, '/s'),
      measured(name, 'Herald p99 latency', p99, 'ms', {
        target: { bound: 10, better: 'lower', text: '<= 10 ms' },
      }),
    ];
  } finally {
    await Promise.all([herald.stop(), bare.stop()]);
  }
}

export const ingestScenario: Scenario = {
  name: 'ingest',
  title: '1. Ingest: POST /notifications vs bare Fastify (npm start, every role)',
  run: (options) => ingestOn('sqlite', options),
};

/** The same with the API alone in the process: what draining on the same cores costs ingest. */
export const ingestApiOnlyScenario: Scenario = {
  name: 'ingest-api-only',
  title: '1. Ingest with HERALD_ROLES=auth,api (no worker in the process)',
  run: (options) => ingestOn('sqlite', options, true),
};
