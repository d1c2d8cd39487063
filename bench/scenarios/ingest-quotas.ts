import { notification } from '../lib/bodies.ts';
import { deploy } from '../lib/deploy.ts';
import type { BenchOptions } from '../lib/options.ts';
import { measured, type Row } from '../lib/report.ts';
import { alternate } from '../lib/rounds.ts';
import { median } from '../lib/stats.ts';
import type { Scenario } from './types.ts';

/**
 * Issue 53 part 3: what per-tenant quotas cost ingest. Two Herald processes alike (SQLite,
 * HERALD_ROLES=auth,api), one with a quota on the benched tenant that is never reached (total and
 * email, per second and per day, so every acceptance spends from four buckets and counts), in
 * alternating rounds of POST /notifications: the ratio of the first's requests/s to the second's.
 */
async function ingestQuotas(options: BenchOptions): Promise<Row[]> {
  const name = 'ingest-quotas';
  const limited = await deploy('sqlite', { roles: 'auth,api' });
  const free = await deploy('sqlite', { roles: 'auth,api' });
  try {
    const high = { ratePerSecond: 1_000_000, burst: 60_000_000, perDay: 1_000_000_000_000 };
    const set = await limited.api.request('PUT', '/admin/tenants/default/quotas', {
      total: high,
      channels: { email: high },
    });
    if (set.status !== 200) throw new Error(`PUT quotas: ${set.status} ${JSON.stringify(set.body)}`);
    // Each process its own token (alternateIngest would send the first's to both).
    const { ingest, rounds } = options.sizes;
    const load = (d: typeof limited) => ({
      method: 'POST' as const,
      path: '/notifications',
      headers: d.api.auth,
      body: JSON.stringify(notification()),
      connections: ingest.connections,
      urls: d.urls,
    });
    const result = await alternate(
      name,
      rounds,
      ingest.warmup,
      ingest.round,
      load(limited),
      load(free),
      { herald: 201, reference: 201 },
      'no quota',
    );
    return [
      measured(name, 'requests/s with a quota, ratio to without', median(result.ratios), 'x', {
        target: { bound: 0.95, better: 'higher', text: '>= 0.95' },
        note: `median of ${options.sizes.rounds} alternating rounds, ${options.sizes.ingest.connections} connections; per round: ${result.ratios.map((r) => r.toFixed(3)).join(', ')}; HERALD_ROLES=auth,api, SQLite`,
      }),
      measured(name, 'requests/s with a quota', median(result.herald.map((r) => r.rps)), '/s'),
      measured(name, 'requests/s without', median(result.reference.map((r) => r.rps)), '/s'),
    ];
  } finally {
    await Promise.all([limited.stop(), free.stop()]);
  }
}

export const ingestQuotasScenario: Scenario = {
  name: 'ingest-quotas',
  title: '53. Ingest with a per-tenant quota set (never reached) vs without',
  run: ingestQuotas,
};
