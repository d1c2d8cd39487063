import { queues, requireRoute } from '../lib/api.ts';
import { batch, notification } from '../lib/bodies.ts';
import { deploy } from '../lib/deploy.ts';
import { fillBacklog } from '../lib/fill.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { checkOrder } from '../lib/order.ts';
import { pacedCritical, runPaced } from '../lib/paced.ts';
import { measured, type Row } from '../lib/report.ts';
import { percentile } from '../lib/stats.ts';
import { criticalLatencies } from './isolation-latency.ts';
import type { Scenario } from './types.ts';

/**
 * Scenario 3: a LOW backlog queued through the batch endpoint, drained by the worker while LOW
 * ingest continues; meanwhile one CRITICAL every 10 ms for 10 s. CRITICAL latency is
 * acceptance (createdAt) to the provider call (the PROCESSING event), from the API's events.
 */
async function run(options: BenchOptions): Promise<Row[]> {
  const s = options.sizes.isolation;
  const herald = await deploy('sqlite');
  const [main] = herald.processes;
  try {
    const { api } = herald;
    await requireRoute(api, 'POST', '/notifications', notification('LOW'), 'the notifications API');
    await queues(api);
    const filled = await fillBacklog(api, s.backlog, 'LOW', 'isolation backlog');
    const lowWaiting = async () =>
      (await queues(api)).filter((q) => q.priority === 'LOW').reduce((n, q) => n + q.depth, 0);
    const waiting = await lowWaiting();
    progress(
      `isolation: ${waiting.toLocaleString('en-US')} LOW waiting; LOW ingest continues, CRITICAL every ${s.everyMs} ms`,
    );
    // LOW ingest goes on through the batch endpoint at a steady rate (batches of 100, open loop),
    // from a second before the first CRITICAL to a second after the last.
    const lowEveryMs = Math.max(1, Math.round((100 / s.lowRate) * 1000));
    const low = runPaced({
      url: herald.urls[0] as string,
      path: '/notifications/batch',
      headers: api.auth,
      body: batch(100, 'LOW'),
      everyMs: lowEveryMs,
      forMs: s.forMs + 2000,
      collect: false,
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const critical = await pacedCritical(herald.urls[0] as string, api.auth, s.everyMs, s.forMs);
    const lowResult = await low;
    const waitingAtEnd = await lowWaiting();
    const latencies = await criticalLatencies(api, critical);
    const order = checkOrder(
      main?.dataDir as string,
      critical.accepted.map((c) => c.id),
    );
    const p99 = percentile(latencies.values, 99);
    const rejected = critical.sent - critical.accepted.length;
    return [
      measured('isolation', 'CRITICAL p99, acceptance to provider call', p99, 'ms', {
        target: { bound: 5, better: 'lower', text: '<= 5 ms' },
        note:
          `${latencies.values.length} of ${critical.sent} CRITICAL processed (${rejected} refused at ingest, ` +
          `${latencies.unprocessed} never processed); p50 ${percentile(latencies.values, 50)} ms, ` +
          `max ${Math.max(...latencies.values)} ms; ${waiting.toLocaleString('en-US')} LOW waiting at the start, ` +
          `${waitingAtEnd.toLocaleString('en-US')} at the end; ` +
          `LOW ingest ${Math.round(lowResult.acceptedCount / (lowResult.seconds ?? 1))}/s through the batch endpoint during the window; ` +
          `CRITICAL 201 round trip p99 ${Math.round(
            percentile(
              critical.accepted.map((c) => c.responseMs),
              99,
            ),
          )} ms` +
          [...critical.failures, ...lowResult.failures].map((f) => `; failure: ${f}`).join(''),
      }),
      measured('isolation', 'CRITICAL processed after a later-accepted LOW', order.violations, '', {
        target: { bound: 0, better: 'lower', text: '0' },
        note: `${order.laterLow} LOW accepted after the first CRITICAL, ${order.laterLowProcessed} of them processed in the window`,
      }),
      measured(
        'isolation',
        `time to queue the ${filled.count.toLocaleString('en-US')} LOW backlog`,
        filled.seconds,
        's',
        {
          note: `${Math.round(filled.perSecond).toLocaleString('en-US')} notifications/s through the batch endpoint, worker draining meanwhile`,
        },
      ),
    ];
  } finally {
    await herald.stop();
  }
}

export const isolationScenario: Scenario = {
  name: 'isolation',
  title: '3. Isolation: CRITICAL latency with a LOW backlog',
  run,
};
