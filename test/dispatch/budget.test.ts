import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { retryDelay } from '../../src/dispatch/backoff.ts';
import { priorityBudget } from '../../src/dispatch/budget.ts';

describe('slot budget', () => {
  it('keeps slots for CRITICAL and HIGH that NORMAL and LOW cannot take', () => {
    const idle = priorityBudget(100, [0, 0, 0, 0], [false, false, false, false]);
    assert.deepEqual(idle, { perPriority: [125, 90, 60, 30], sharedLimit: 100 });
    const bulkBusy = priorityBudget(100, [0, 0, 30, 30], [false, false, false, false]);
    assert.deepEqual(bulkBusy.perPriority, [65, 30, 0, 0]);
  });

  it('lets CRITICAL past a full worker by its reserve', () => {
    const full = priorityBudget(100, [0, 90, 0, 10], [false, false, false, false]);
    assert.deepEqual(full, { perPriority: [25, 0, 0, 0], sharedLimit: 0 });
  });

  it('gives LOW nothing while CRITICAL or HIGH backs up', () => {
    assert.equal(priorityBudget(100, [0, 0, 0, 0], [false, true, false, false]).perPriority[3], 0);
    assert.equal(priorityBudget(100, [0, 0, 0, 0], [false, false, true, false]).perPriority[3], 30);
  });

  it('serves every priority with a single slot', () => {
    assert.deepEqual(priorityBudget(1, [0, 0, 0, 0], [false, false, false, false]).perPriority, [2, 1, 1, 1]);
  });
});

describe('retry delay', () => {
  const policy = {
    retryBaseMs: 2000,
    retryMaxMs: 1_800_000,
    retryMaxMsCritical: 300_000,
    retryMaxAttempts: 8,
  };
  it('draws from [0, base * 2^(attempt-1)] capped per priority, never below Retry-After', () => {
    assert.equal(
      retryDelay(policy, 'NORMAL', 1, undefined, () => 0.5),
      1000,
    );
    assert.equal(
      retryDelay(policy, 'NORMAL', 3, undefined, () => 0.5),
      4000,
    );
    assert.equal(
      retryDelay(policy, 'NORMAL', 20, undefined, () => 0.5),
      900_000,
    );
    assert.equal(
      retryDelay(policy, 'CRITICAL', 20, undefined, () => 0.5),
      150_000,
    );
    assert.equal(
      retryDelay(policy, 'NORMAL', 1, 60_000, () => 0.5),
      60_000,
    );
    assert.equal(
      retryDelay(policy, 'NORMAL', 1, undefined, () => 0),
      0,
    );
  });
});
