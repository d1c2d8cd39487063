/** Time source passed to every factory, so tests can freeze or move time. Milliseconds since the epoch. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export function manualClock(
  start = Date.UTC(2026, 0, 1),
): Clock & { advance(ms: number): void; set(ms: number): void } {
  let current = start;
  return {
    now: () => current,
    advance(ms: number) {
      current += ms;
    },
    set(ms: number) {
      current = ms;
    },
  };
}

/** The range of a Date, in ms either side of the epoch. */
const DATE_RANGE_MS = 8.64e15;
let isoSecond = Number.NaN;
let isoPrefix = '';

/**
 * Every time Herald writes out (answers, events, logs) as ISO 8601 UTC with milliseconds:
 * `new Date(ms).toISOString()`, about 25 times cheaper for the times that come in runs: the text
 * up to the second is kept from the last call. A live stream or a callback sender formats one
 * time per status change (at 0.88 µs a call, 7% of the main thread's profile with 100 streams).
 */
export function iso(ms: number): string {
  if (!Number.isInteger(ms) || Math.abs(ms) > DATE_RANGE_MS) return new Date(ms).toISOString();
  const second = Math.floor(ms / 1000);
  if (second !== isoSecond) {
    const whole = new Date(second * 1000).toISOString();
    // "…:ss.000Z": everything before the milliseconds.
    isoPrefix = whole.slice(0, -4);
    isoSecond = second;
  }
  const millis = ms - second * 1000;
  return `${isoPrefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}
