// #52 (docs/workflows.md "Steps"): a send's `if`, evaluated over the run's earlier notifications when reached.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunNotification } from '../../src/store/port/workflow-runs.ts';
import { conditionHolds } from '../../src/workflows/advance.ts';

const n = (channel: string, status: RunNotification['status'], read = false): RunNotification => ({
  id: `${channel}-${status}`,
  channel,
  status,
  read,
});

describe("a send step's condition", () => {
  it('not_read: no in-app message of the run was read', () => {
    assert.equal(conditionHolds('not_read', []), true);
    assert.equal(conditionHolds('not_read', [n('inapp', 'DELIVERED')]), true);
    assert.equal(conditionHolds('not_read', [n('inapp', 'DELIVERED', true)]), false);
    assert.equal(conditionHolds('not_read', [n('email', 'DELIVERED', true)]), true);
  });

  it('not_delivered: none of its notifications is DELIVERED', () => {
    assert.equal(conditionHolds('not_delivered', [n('email', 'SENT'), n('sms', 'FAILED')]), true);
    assert.equal(conditionHolds('not_delivered', [n('email', 'SENT'), n('inapp', 'DELIVERED')]), false);
  });

  it('failed: one of them ended FAILED or SKIPPED', () => {
    assert.equal(conditionHolds('failed', [n('email', 'DELIVERED')]), false);
    assert.equal(conditionHolds('failed', [n('email', 'DELIVERED'), n('sms', 'FAILED')]), true);
    assert.equal(conditionHolds('failed', [n('email', 'SKIPPED')]), true);
    assert.equal(conditionHolds(undefined, []), true);
  });
});
