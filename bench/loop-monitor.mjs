// Loaded into a benched Herald process with `node --import` (NODE_OPTIONS, see
// bench/scenarios/recipients-import.ts): the main thread's event-loop delay (perf_hooks
// monitorEventLoopDelay), written as JSON to BENCH_LOOP_FILE every 100 ms; SIGUSR2 starts it
// afresh. A bench aid only: Herald itself does not load it.
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const file = process.env.BENCH_LOOP_FILE;
if (isMainThread && file) {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const ms = (ns) => Math.round(ns / 1e4) / 100;
  const write = () =>
    writeFileSync(
      file,
      JSON.stringify({ max: ms(loop.max), p99: ms(loop.percentile(99)), count: loop.count }),
    );
  process.on('SIGUSR2', () => {
    loop.reset();
    write();
  });
  setInterval(write, 100).unref();
}
