import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { atMostEvery } from '../src/at-most.ts';

describe('atMostEvery', () => {
  it('runs the first call at once and joins the calls of one gap into one run after it', async () => {
    let runs = 0;
    const call = atMostEvery(50, () => {
      runs += 1;
    });
    call();
    assert.equal(runs, 1, 'at once after a quiet spell');
    call();
    call();
    call();
    assert.equal(runs, 1, 'the next ones wait for the gap');
    await sleep(120);
    assert.equal(runs, 2, 'and run once, together');
    await sleep(60);
    call();
    assert.equal(runs, 3, 'at once again after a quiet spell');
  });
});
