import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { withBase } from '../lib/api.ts';
import { batch as notificationBatch } from '../lib/bodies.ts';
import { deploy } from '../lib/deploy.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { ROOT, runChild, threadTimesOf } from '../lib/proc.ts';
import { measured, type Row } from '../lib/report.ts';
import { percentile } from '../lib/stats.ts';
import { tempDir } from '../lib/tmp.ts';
import type { Scenario } from './types.ts';

/** What bench/recipient-importer.ts is told. */
export interface ImporterSpec {
  url: string;
  token: string;
  /** Recipient IDs start with it: a second run with the same tag replaces the first run's. */
  tag: string;
  total: number;
  batch: number;
  connections: number;
  /** Characters added to each recipient's `data` (large bodies); none by default. */
  pad?: number;
}

/** What it reports: recipients written (200 or 201), the wall time, each item status seen. */
export interface ImporterResult {
  recipients: number;
  seconds: number;
  statuses: Record<string, number>;
  failures: string[];
}

const TARGET = { bound: 50_000, better: 'higher' as const, text: '>= 50,000/s' };

/**
 * Scenario 19 (#50): recipients imported through POST /recipients/batch, 1000 a request, on
 * `npm start`'s layout (SQLite, every role): `total` new recipients (201), then the same again
 * (each a full replacement, 200). Throws when any item was refused, so a figure never counts
 * refusals.
 */
export const recipientsImportScenario: Scenario = {
  name: 'recipients-import',
  title: '19. Recipients imported through POST /recipients/batch (npm start)',
  async run(options: BenchOptions): Promise<Row[]> {
    const { total, batch, connections } = options.sizes.recipients;
    // The API thread's event-loop delay, read by bench/loop-monitor.mjs inside the process.
    const loopFile = join(tempDir('loop'), 'loop.json');
    const herald = await deploy('sqlite', {
      env: {
        NODE_OPTIONS: `--import=${join(ROOT, 'bench/loop-monitor.mjs')}`,
        BENCH_LOOP_FILE: loopFile,
      },
    });
    try {
      const spec: ImporterSpec = {
        url: herald.api.url,
        token: herald.api.token,
        tag: 'r',
        total,
        batch,
        connections,
      };
      const rows: Row[] = [];
      for (const [pass, status] of [
        ['created', '201'],
        ['replaced', '200'],
      ] as const) {
        const pid = herald.processes[0]?.pid as number;
        const before = threadTimesOf(pid);
        const result = await runChild<ImporterResult>('bench/recipient-importer.ts', spec);
        const after = threadTimesOf(pid);
        if (result.failures.length > 0 || result.recipients !== total || result.statuses[status] !== total) {
          throw new Error(
            `recipients-import (${pass}): ${result.recipients} of ${total} written, statuses ${JSON.stringify(result.statuses)} ${result.failures.join(' | ')}`,
          );
        }
        const perSecond = result.recipients / result.seconds;
        progress(
          `recipients-import: ${total.toLocaleString('en-US')} ${pass} in ${result.seconds.toFixed(2)} s`,
        );
        // Herald's own CPU time for them: what bounds the figure once the machine is quiet, and
        // the time its threads were ready to run but waited for a core (other load).
        const cpuSeconds = (after.runMs - before.runMs) / 1000;
        const waitedSeconds = (after.waitMs - before.waitMs) / 1000;
        rows.push(
          measured('recipients-import', `recipients/s ${pass} (${batch} a request)`, perSecond, '/s', {
            target: TARGET,
            note: `${total.toLocaleString('en-US')} distinct recipients, ${connections} requests in flight, every item checked ${status}; every role in one process (the worker idles); Herald's threads waited ${waitedSeconds.toFixed(1)} s for a core`,
          }),
          measured(
            'recipients-import',
            `recipients ${pass} per second of Herald's CPU time`,
            result.recipients / cpuSeconds,
            '/s',
            { note: `${cpuSeconds.toFixed(2)} s on a CPU, every thread of the process` },
          ),
        );
      }
      rows.push(...(await largeBodies(herald.processes[0]?.pid as number, loopFile, spec)));
      return rows;
    } finally {
      await herald.stop();
    }
  },
};

/** Large bodies: batches of 1,000 recipients with about 7 KB of data each (6.9 MiB a body). */
const LARGE = { batches: 8, connections: 2, pad: 7200 };

/**
 * How long the API's event loop is held while large batches arrive (issue 50): the largest
 * event-loop delay of Herald's main thread (perf_hooks monitorEventLoopDelay, in the process)
 * while LARGE.batches bodies of 6.9 MiB are sent, two at a time. Meanwhile small notification
 * batches are sent one after another: their latency shows whether an import holds them back in
 * the batch threads they share (decision record 0037).
 */
async function largeBodies(pid: number, loopFile: string, spec: ImporterSpec): Promise<Row[]> {
  const total = LARGE.batches * spec.batch;
  const read = () => JSON.parse(readFileSync(loopFile, 'utf8')) as { max: number; p99: number };
  // The main thread's CPU time (its tid is the pid): what reading the bodies costs the event
  // loop, much steadier than a delay on a shared machine.
  const mainRunMs = () =>
    Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  const ranBefore = mainRunMs();
  process.kill(pid, 'SIGUSR2');
  let importing = true;
  const [result, latencies] = await Promise.all([
    runChild<ImporterResult>('bench/recipient-importer.ts', {
      ...spec,
      tag: 'large',
      total,
      connections: LARGE.connections,
      pad: LARGE.pad,
    }).finally(() => {
      importing = false;
    }),
    notificationsBeside(spec, () => importing),
  ]);
  // The monitor writes every 100 ms: wait for a write after the last answer.
  await new Promise((resolve) => setTimeout(resolve, 250));
  const loop = read();
  const mainMs = Math.round((mainRunMs() - ranBefore) / LARGE.batches);
  if (result.failures.length > 0 || result.recipients !== total) {
    throw new Error(
      `recipients-import (large): ${result.recipients} of ${total} written ${result.failures.join(' | ')}`,
    );
  }
  progress(
    `recipients-import: ${LARGE.batches} bodies of 6.9 MiB in ${result.seconds.toFixed(2)} s, loop max ${loop.max} ms, main thread ${mainMs} ms of CPU a body`,
  );
  return [
    measured('recipients-import', 'API event-loop delay max during 6.9 MiB batches', loop.max, 'ms', {
      note: `${LARGE.batches} bodies of 1,000 recipients with 7 KB of data each, ${LARGE.connections} at a time; p99 ${loop.p99} ms; the main thread ran ${mainMs} ms of CPU a body; monitorEventLoopDelay in Herald's main thread (bench/loop-monitor.mjs)`,
    }),
    measured(
      'recipients-import',
      `POST /notifications/batch (${BESIDE.size} items) p50 beside the 6.9 MiB imports`,
      percentile(latencies, 50),
      'ms',
      {
        note: `${latencies.length} batches, one after another while the imports ran; max ${Math.max(0, ...latencies)} ms; the batch threads read both kinds, notification batches first, imports never in the last thread (decision record 0037)`,
      },
    ),
  ];
}

/** The notification batches sent beside the large imports: small, one after another. */
const BESIDE = { size: 10 };

/** Sends BESIDE batches one after another while `running()`; each one's latency in ms. */
async function notificationsBeside(spec: ImporterSpec, running: () => boolean): Promise<number[]> {
  const api = withBase(spec.token, spec.url);
  const body = JSON.parse(notificationBatch(BESIDE.size));
  const latencies: number[] = [];
  while (running()) {
    const since = performance.now();
    const { status, body: answer } = await api.request('POST', '/notifications/batch', body);
    if (status !== 207) throw new Error(`POST /notifications/batch: ${status} ${JSON.stringify(answer)}`);
    latencies.push(Math.round(performance.now() - since));
  }
  return latencies;
}
