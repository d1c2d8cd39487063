import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Row } from '../../bench/lib/report.ts';
import { SCENARIOS } from '../../bench/scenarios/index.ts';
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

/**
 * The SQLite scenarios in two halves, one a test file (bench-smoke.test.ts and
 * bench-smoke-rest.test.ts): together they took 249 s quick, near the runner's 300 s a file.
 */
const names = SCENARIOS.map((s) => s.name);
export const SMOKE_PARTS = [
  names.slice(0, Math.ceil(names.length / 2)),
  names.slice(Math.ceil(names.length / 2)),
];

/** Runs one half of the SQLite scenarios quick and checks each ran and recorded its figures. */
export function smokePart(part: 0 | 1): void {
  const scenarios = SMOKE_PARTS[part] ?? [];
  const { run, results } = quickBench('--scenario', scenarios.join(','));
  assert.deepEqual(
    results.scenarios.map((s) => s.name),
    scenarios,
  );
  for (const row of results.rows.filter((r) => r.status === 'ok')) {
    assert.equal(typeof row.value, 'number', `${row.scenario} / ${row.metric} has no value`);
  }
  assert.match(run.stdout, /^\| scenario/m);
  assert.match(run.stdout.trim().split('\n').at(-1) ?? '', /^bench: /);
}
