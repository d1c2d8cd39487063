import { deploy } from '../lib/deploy.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { runChild, threadTimesOf } from '../lib/proc.ts';
import { measured, type Row } from '../lib/report.ts';
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
    const herald = await deploy('sqlite');
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
      return rows;
    } finally {
      await herald.stop();
    }
  },
};
