import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { manualClock } from '../../src/clock.ts';
import { bothLimits, createRateWindow } from '../../src/dispatch/rate-window.ts';

describe('rate window', () => {
  it('never starts more than its limit in any rolling second, even across a second boundary', () => {
    const clock = manualClock(0);
    const rate = createRateWindow(clock, 4);
    const starts: number[] = [];
    // Try to start a send every 50 ms for 5 s: a token bucket full at a second's edge would let
    // 8 through around it; the window lets 4.
    for (let t = 0; t < 5000; t += 50) {
      clock.set(t);
      if (rate.tryTake()) starts.push(t);
    }
    for (let i = 0; i + 4 < starts.length; i++) {
      assert.ok((starts[i + 4] as number) - (starts[i] as number) >= 1000, `starts ${i}..${i + 4}`);
    }
    assert.equal(starts.length, 20, 'and it uses the whole rate: 4 a second for 5 s');
  });

  it('says how long until the next start and how many may start now', () => {
    const clock = manualClock(0);
    const rate = createRateWindow(clock, 2);
    assert.equal(rate.available(), 2);
    assert.ok(rate.tryTake());
    clock.set(300);
    assert.ok(rate.tryTake());
    assert.equal(rate.available(), 0);
    assert.equal(rate.waitMs(), 700, 'the first start leaves the window at 1000');
    assert.equal(rate.tryTake(), false);
    clock.set(1000);
    assert.equal(rate.available(), 1);
    assert.equal(rate.waitMs(), 0);
  });

  it('starts a send under two limits only when both allow it, and spends from both', () => {
    const clock = manualClock(0);
    const local = createRateWindow(clock, 3);
    const pool = createRateWindow(clock, 1);
    const both = bothLimits(local, pool);
    assert.equal(both.available(), 1);
    assert.ok(both.tryTake());
    assert.equal(both.tryTake(), false, 'the pool is empty');
    assert.equal(local.available(), 2, 'a refused start spends nothing from the other limit');
  });
});
