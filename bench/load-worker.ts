/**
 * The load generator, in its own process so it does not share a core's event loop with the
 * bench or with Herald. Reads a LoadSpec (JSON file named by argv[2]), runs autocannon, prints
 * "PROGRESS <n>" lines while it runs and one "RESULT <json>" line (a LoadResult) at the end.
 */
import autocannon from 'autocannon';
import type { LoadResult, LoadSpec } from './lib/load.ts';
import { readSpec } from './lib/proc.ts';

const spec = readSpec<LoadSpec>();
const samples: Array<{ status: number; body: string }> = [];
let completed = 0;

// autocannon merges options over its defaults, so an explicit undefined would erase a default.
const defined = <T extends object>(options: T): T =>
  Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as T;

const instance = autocannon(
  defined({
    url: spec.urls,
    connections: spec.connections,
    duration: spec.seconds,
    amount: spec.amount,
    overallRate: spec.overallRate,
    // A run of `amount` requests ends at the next sample tick; short ticks end short runs sooner.
    sampleInt: spec.amount ? 100 : undefined,
    timeout: spec.timeoutSeconds ?? 30,
    requests: [
      {
        method: spec.method,
        path: spec.path,
        headers: { 'content-type': 'application/json', ...spec.headers },
        body: spec.body,
        // Keeps a few non-2xx bodies so a failing run says why (first problem+json seen).
        onResponse(status, body) {
          if ((status < 200 || status > 299) && samples.length < 3)
            samples.push({ status, body: body.slice(0, 500) });
        },
      },
    ],
  }),
  (error, result) => {
    if (error) {
      console.error(error.message);
      process.exit(1);
    }
    const statusCodes: Record<string, number> = {};
    for (const [code, stats] of Object.entries(result.statusCodeStats)) statusCodes[code] = stats.count;
    const requests = result.requests.total;
    const out: LoadResult = {
      requests,
      seconds: result.duration,
      rps: result.duration > 0 ? requests / result.duration : 0,
      latency: {
        mean: result.latency.mean,
        p50: result.latency.p50,
        p90: result.latency.p90,
        p99: result.latency.p99,
        max: result.latency.max,
      },
      errors: result.errors,
      timeouts: result.timeouts,
      non2xx: result.non2xx,
      statusCodes,
      samples,
    };
    console.log(`RESULT ${JSON.stringify(out)}`);
  },
);

if (spec.progressEvery) {
  instance.on('response', () => {
    completed++;
    if (completed % (spec.progressEvery as number) === 0) console.log(`PROGRESS ${completed}`);
  });
}
