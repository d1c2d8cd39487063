import { freePort } from '../../test/helpers/ports.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { baseEnv, memoryOf, spawnNode } from '../lib/proc.ts';
import { measured, type Row } from '../lib/report.ts';
import { median } from '../lib/stats.ts';
import { tempDir } from '../lib/tmp.ts';
import type { Scenario } from './types.ts';

/** Polls `url` until it answers 200; resolves with the time it took from `since`. */
async function firstOk(url: string, since: number, timeoutMs = 30_000): Promise<number> {
  for (;;) {
    try {
      if ((await fetch(url)).ok) return performance.now() - since;
    } catch {
      // Not listening yet.
    }
    if (performance.now() - since > timeoutMs)
      throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Scenario 13: `npm start` as a user runs it (`node bin/herald.js start`, every role, an empty
 * data directory each time): the time from spawning the process to the first 200 of
 * `GET /health`, and the RSS of the idle process a few seconds later and once it has settled
 * (V8's memory reducer gives back what start-up left behind about 9 s after start). Medians of
 * several starts.
 */
async function run(options: BenchOptions): Promise<Row[]> {
  const { runs, idleSeconds, settledSeconds } = options.sizes.startup;
  const startups: number[] = [];
  const rss: number[] = [];
  const settled: number[] = [];
  const rssOf = (pid: number) => {
    const memory = memoryOf(pid);
    if (!memory) throw new Error('could not read /proc/<pid>/status (Linux only)');
    return memory.currentMb;
  };
  for (let i = 0; i < runs; i++) {
    const [apiPort, gatewayPort] = [await freePort(), await freePort()];
    const env = {
      ...baseEnv(),
      HERALD_DATA_DIR: tempDir('startup'),
      HERALD_HOST: '127.0.0.1',
      HERALD_API_PORT: String(apiPort),
      HERALD_GATEWAY_PORT: String(gatewayPort),
      LOG_LEVEL: 'warn',
    };
    const started = performance.now();
    const child = spawnNode(['bin/herald.js', 'start'], env, 'herald');
    try {
      startups.push(await firstOk(`http://127.0.0.1:${apiPort}/health`, started));
      await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
      rss.push(rssOf(child.pid));
      await new Promise((resolve) => setTimeout(resolve, (settledSeconds - idleSeconds) * 1000));
      settled.push(rssOf(child.pid));
    } finally {
      await child.stop();
    }
    progress(
      `startup ${i + 1}/${runs}: ${Math.round(startups.at(-1) ?? 0)} ms, ${Math.round(rss.at(-1) ?? 0)} MB, settled ${Math.round(settled.at(-1) ?? 0)} MB`,
    );
  }
  const how = `median of ${runs} starts of node bin/herald.js start (every role, empty data directory)`;
  return [
    measured('startup', 'start-up to GET /health', median(startups), 'ms', {
      target: { bound: 500, better: 'lower', text: '<= 500 ms' },
      note: `${how}; each: ${startups.map((ms) => Math.round(ms)).join(', ')} ms`,
    }),
    measured('startup', `idle RSS ${idleSeconds} s after start-up`, median(rss), 'MB', {
      target: { bound: 100, better: 'lower', text: '<= 100 MB' },
      note: `${how}; each: ${rss.map((mb) => Math.round(mb)).join(', ')} MB`,
    }),
    measured('startup', `idle RSS ${settledSeconds} s after start-up (settled)`, median(settled), 'MB', {
      note: `${how}; each: ${settled.map((mb) => Math.round(mb)).join(', ')} MB`,
    }),
  ];
}

export const startupScenario: Scenario = {
  name: 'startup',
  title: '13. Start-up: time to /health and idle RSS of npm start',
  run,
};
