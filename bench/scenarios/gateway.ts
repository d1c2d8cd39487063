import { login } from '../lib/api.ts';
import { notification } from '../lib/bodies.ts';
import { startHerald } from '../lib/herald.ts';
import type { BenchOptions } from '../lib/options.ts';
import { measured, type Row } from '../lib/report.ts';
import { alternate } from '../lib/rounds.ts';
import { median } from '../lib/stats.ts';
import type { Scenario } from './types.ts';

/**
 * The gateway's hop: `GET /api/notifications/{id}` through the gateway against
 * `GET /notifications/{id}` straight to the API, in alternating rounds on one `npm start` process
 * (every role, so the gateway and the API share its main thread, as they do for a user). What
 * the ratio leaves out is what the hop costs a request: the web UI's calls all take it.
 */
async function run(options: BenchOptions): Promise<Row[]> {
  const herald = await startHerald({ roles: 'auth,api,worker,gateway' });
  try {
    if (!herald.gatewayUrl) throw new Error('the start-up line named no gateway address');
    const api = await login(herald.url);
    const created = await api.request('POST', '/notifications', notification('NORMAL'));
    const id = (created.body as { notificationId?: string } | undefined)?.notificationId;
    if (created.status !== 201 || !id) throw new Error(`notification creation failed: ${created.status}`);
    const { ingest, rounds } = options.sizes;
    const spec = (url: string, path: string) => ({
      urls: [url],
      method: 'GET' as const,
      path,
      headers: api.auth,
      connections: ingest.connections,
    });
    const result = await alternate(
      'gateway',
      rounds,
      ingest.warmup,
      ingest.round,
      spec(herald.gatewayUrl, `/api/notifications/${id}`),
      spec(herald.url, `/notifications/${id}`),
      { herald: 200, reference: 200 },
      'direct',
    );
    const note =
      `median of ${rounds} alternating rounds, ${ingest.connections} connections, one token; per round: ` +
      result.ratios.map((r) => r.toFixed(3)).join(', ');
    return [
      measured('gateway', 'GET through the gateway vs straight to the API', median(result.ratios), 'x', {
        note,
      }),
      measured('gateway', 'through the gateway, requests/s', median(result.herald.map((r) => r.rps)), '/s', {
        note: `p99 ${median(result.herald.map((r) => r.latency.p99))} ms`,
      }),
      measured(
        'gateway',
        'straight to the API, requests/s',
        median(result.reference.map((r) => r.rps)),
        '/s',
        {
          note: `p99 ${median(result.reference.map((r) => r.latency.p99))} ms`,
        },
      ),
    ];
  } finally {
    await herald.stop();
  }
}

export const gatewayScenario: Scenario = {
  name: 'gateway',
  title: 'Gateway: a GET through the UI gateway vs straight to the API (npm start)',
  run,
};
