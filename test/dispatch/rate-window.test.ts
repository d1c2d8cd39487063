import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { manualClock } from '../../src/clock.ts';
import { bothLimits, createRateWindow } from '../../src/dispatch/rate-window.ts';
import { reserveCaps, roomFor } from '../../src/reserve.ts';

describe('rate window', () => {
  it('never starts more than its limit in any rolling second, even across a second boundary', () => {
    const clock = manualClock(0);
    const rate = createRateWindow(clock, 4);
    const starts: number[] = [];
    // Try to start a send every 50 ms for 5 s: a token bucket full at a second's edge would let
    // 8 through around it; the window lets 4.
    for (let t = 0; t < 5000; t += 50) {
      clock.set(t);
      if (rate.tryTake(0)) starts.push(t);
    }
    for (let i = 0; i + 4 < starts.length; i++) {
      assert.ok((starts[i + 4] as number) - (starts[i] as number) >= 1000, `starts ${i}..${i + 4}`);
    }
    assert.equal(starts.length, 20, 'and it uses the whole rate: 4 a second for 5 s');
  });

  it('says how long until the next start and how many may start now', () => {
    const clock = manualClock(0);
    const rate = createRateWindow(clock, 2);
    assert.equal(rate.available(0), 2);
    assert.ok(rate.tryTake(0));
    clock.set(300);
    assert.ok(rate.tryTake(0));
    assert.equal(rate.available(0), 0);
    assert.equal(rate.waitMs(0), 700, 'the first start leaves the window at 1000');
    assert.equal(rate.tryTake(0), false);
    clock.set(1000);
    assert.equal(rate.available(0), 1);
    assert.equal(rate.waitMs(0), 0);
  });

  it('starts a send under two limits only when both allow it, and spends from both', () => {
    const clock = manualClock(0);
    const local = createRateWindow(clock, 3);
    const pool = createRateWindow(clock, 1);
    const both = bothLimits(local, pool);
    assert.equal(both.available(0), 1);
    assert.ok(both.tryTake(0));
    assert.equal(both.tryTake(0), false, 'the pool is empty');
    assert.equal(local.available(0), 2, 'a refused start spends nothing from the other limit');
  });

  it('keeps a quarter of the rate for CRITICAL and HIGH: LOW at most half, NORMAL and LOW three quarters', () => {
    const clock = manualClock(0);
    const rate = createRateWindow(clock, 8);
    let low = 0;
    while (rate.tryTake(3)) low++;
    assert.equal(low, 4, 'LOW stops at half the window');
    assert.equal(rate.available(2), 2, 'NORMAL may take up to three quarters with LOW');
    assert.ok(rate.tryTake(2) && rate.tryTake(2));
    assert.equal(rate.tryTake(2), false);
    assert.equal(rate.available(1), 2, 'the last quarter is HIGH and CRITICAL only');
    assert.ok(rate.tryTake(1) && rate.tryTake(0));
    assert.equal(rate.tryTake(0), false, 'and the whole window still holds');
    clock.set(400);
    assert.equal(rate.waitMs(3), 600, 'LOW waits for the first LOW start to leave the window');
  });

  it('reserves at least one unit of two or more, and none of one', () => {
    assert.deepEqual(reserveCaps(1), { total: 1, bulk: 1, low: 1 });
    assert.deepEqual(reserveCaps(2), { total: 2, bulk: 1, low: 1 });
    assert.deepEqual(reserveCaps(5), { total: 5, bulk: 3, low: 2 });
    assert.deepEqual(reserveCaps(100), { total: 100, bulk: 75, low: 50 });
    const caps = reserveCaps(5);
    assert.equal(roomFor(3, [0, 0, 0, 2], caps), 0, 'LOW holds its half');
    assert.equal(roomFor(2, [0, 0, 1, 2], caps), 0, 'NORMAL and LOW hold three of five');
    assert.equal(roomFor(0, [0, 0, 1, 2], caps), 2, 'two stay for CRITICAL and HIGH');
    assert.equal(roomFor(3, [3, 0, 0, 0], caps), 2, 'LOW uses what the others leave, up to its share');
    assert.equal(roomFor(3, [4, 0, 0, 0], caps), 1);
  });
});
