import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SCENARIOS } from '../../bench/scenarios/index.ts';
import { quickBench } from '../helpers/quick-bench.ts';

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
});
