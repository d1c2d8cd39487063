// The PostgreSQL scenarios of `npm run bench -- --quick`, apart from the SQLite ones so that each
// file stays within the test runner's 300 s a file.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { quickBench } from '../helpers/quick-bench.ts';

describe('npm run bench --quick on PostgreSQL', () => {
  it('runs ingest, dispatch, a fan-out, the inbox and workflow runs on PostgreSQL', () => {
    const { results } = quickBench(
      '--scenario',
      'ingest-postgres,dispatch-postgres,fan-out-postgres,inbox-postgres,workflows-postgres',
    );
    assert.deepEqual(
      results.scenarios.map((s) => s.name),
      ['ingest-postgres', 'dispatch-postgres', 'fan-out-postgres', 'inbox-postgres', 'workflows-postgres'],
    );
  });
});
