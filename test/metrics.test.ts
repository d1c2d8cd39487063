// What an idle process's metrics cost (#48, decision 0038): the main thread's event-loop delay
// histogram is a timer that wakes the loop at each sample, so its rate is the idle wake-ups.
import assert from 'node:assert/strict';
import perfHooks, { type IntervalHistogram } from 'node:perf_hooks';
import { after, describe, it } from 'node:test';
import { createMetrics } from '../src/metrics.ts';

describe('the process metrics', () => {
  const original = perfHooks.monitorEventLoopDelay;
  const made: { resolution?: number; histogram: IntervalHistogram }[] = [];
  after(() => {
    perfHooks.monitorEventLoopDelay = original;
    for (const { histogram } of made) histogram.disable();
  });

  it('sample the event-loop delay ten times a second, not 100 (prom-client alone wakes an idle loop every 10 ms)', async () => {
    // prom-client calls perf_hooks.monitorEventLoopDelay when the default metrics are made.
    perfHooks.monitorEventLoopDelay = (options) => {
      const histogram = original(options);
      made.push({ resolution: options?.resolution, histogram });
      return histogram;
    };
    const metrics = createMetrics();
    assert.equal(made.length, 1, 'one event-loop delay histogram');
    assert.ok((made[0]?.resolution ?? 10) >= 100, `sampled every ${made[0]?.resolution} ms`);
    assert.match(await metrics.exposition(), /nodejs_eventloop_lag_p99_seconds/);
    // A thread's metrics leave them to the main thread: no histogram, no wake-ups.
    createMetrics({ processMetrics: false });
    assert.equal(made.length, 1);
  });
});
