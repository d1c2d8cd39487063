import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { iso } from '../src/clock.ts';

describe('iso', () => {
  it('formats every time as Date#toISOString does, across second boundaries and out of range', () => {
    const times = [0, 1, 999, 1000, -1, -999, -1000, -1001, 1.5, -0.5, 8.64e15, -8.64e15];
    // 253402300800000 is year 10000, where the format gains a sign and six year digits.
    times.push(253402300799999, 253402300800000, -62167219200001);
    // Runs within a second and across seconds, as the stream formats them.
    const start = Date.UTC(2026, 10, 26, 23, 59, 58, 990);
    for (let i = 0, t = start; i < 3000; i++, t += i % 7) times.push(t);
    for (let i = 0; i < 20000; i++) times.push(Math.floor(Math.random() * 4e12) - 1e12);
    for (const ms of times) assert.equal(iso(ms), new Date(ms).toISOString(), String(ms));
  });

  it('throws as Date#toISOString does on an invalid time', () => {
    for (const ms of [Number.NaN, 8.64e15 + 1, Number.POSITIVE_INFINITY])
      assert.throws(() => iso(ms), RangeError);
  });
});
