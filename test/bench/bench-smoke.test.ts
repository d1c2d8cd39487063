import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Row } from '../../bench/lib/report.ts';
import { SCENARIOS } from '../../bench/scenarios/index.ts';
import { tempDir } from '../helpers/config.ts';

/** Runs `npm run bench -- --quick` with `flags`; fails on any error row or a non-zero exit. */
function quickBench(...flags: string[]) {
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
describe('npm run bench --quick', () => {
  it('runs every scenario end to end and records a result for each', () => {
    const { run, results } = quickBench();
    assert.deepEqual(
      results.scenarios.map((s) => s.name),
      SCENARIOS.map((s) => s.name),
    );
    for (const row of results.rows.filter((r) => r.status === 'ok')) {
      assert.equal(typeof row.value, 'number', `${row.scenario} / ${row.metric} has no value`);
    }
    assert.match(run.stdout, /^\| scenario/m);
    assert.match(run.stdout.trim().split('\n').at(-1) ?? '', /^bench: /);
  });

  it('runs ingest and dispatch on PostgreSQL with two API processes', () => {
    const { results } = quickBench('--scenario', 'ingest-postgres,dispatch-postgres');
    assert.deepEqual(
      results.scenarios.map((s) => s.name),
      ['ingest-postgres', 'dispatch-postgres'],
    );
  });
});
