import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Row } from '../../bench/lib/report.ts';
import { tempDir } from './config.ts';

/** Runs `npm run bench -- --quick` with `flags`; fails on any error row or a non-zero exit. */
export function quickBench(...flags: string[]) {
  const dir = tempDir('herald-bench-test-');
  const out = join(dir, 'quick.json');
  const args = ['--import', 'tsx', 'bench/run.ts', '--quick', '--quiet', '--out', out, ...flags];
  const run = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 280_000 });
  const results = JSON.parse(readFileSync(out, 'utf8')) as {
    scenarios: Array<{ name: string; status: string }>;
    rows: Row[];
    summary: string;
  };
  rmSync(dir, { recursive: true, force: true });
  const errors = results.rows.filter((row) => row.status === 'error');
  assert.deepEqual(errors, [], run.stderr);
  assert.equal(run.status, 0, run.stderr);
  return { run, results };
}

// A smoke run of the bench: a few hundred requests per scenario, so the harness does not rot.
// No figure is asserted (CI has no timed assertions), only that each scenario ran or says which
// part it is still waiting for.
