import type { Clock } from '../clock.ts';

/** A provider's rate limit as the scheduler consults it before every send. */
export interface RateLimiter {
  /** Sends that may start now. */
  available(): number;
  tryTake(): boolean;
  /** Milliseconds until one more send may start (0 when one may now). */
  waitMs(): number;
}

/**
 * The one rate limiter of a provider, owned by dispatch: at most `perWindow` sends start in any
 * rolling window (one second by default), first come first served. A sliding log rather than a
 * token bucket, because a bucket full at the edge of a second lets up to twice the rate through
 * (nodemailer's own pool limit does this, which the SMTP burst test caught); providers therefore
 * keep no window of their own. Memory: the start times of the last window's sends only.
 */
export function createRateWindow(clock: Clock, perWindow: number, windowMs = 1000): RateLimiter {
  const starts: number[] = [];
  let head = 0;
  const inWindow = () => {
    const now = clock.now();
    while (head < starts.length && now - (starts[head] as number) >= windowMs) head++;
    // Drop what has left the window now and then, not on every call.
    if (head > 1024 && head * 2 > starts.length) {
      starts.splice(0, head);
      head = 0;
    }
    return starts.length - head;
  };
  return {
    available: () => Math.max(0, perWindow - inWindow()),
    tryTake() {
      if (inWindow() >= perWindow) return false;
      starts.push(clock.now());
      return true;
    },
    waitMs() {
      const n = inWindow();
      if (n < perWindow) return 0;
      // Full: the send that started perWindow sends ago must leave the window first.
      return Math.max(1, (starts[starts.length - perWindow] as number) + windowMs - clock.now());
    },
  };
}

/** Both limits at once: a send starts only when each allows it (a worker's window and the shared pool). */
export function bothLimits(a: RateLimiter, b: RateLimiter): RateLimiter {
  return {
    available: () => Math.min(a.available(), b.available()),
    tryTake: () => a.available() > 0 && b.available() > 0 && a.tryTake() && b.tryTake(),
    waitMs: () => Math.max(a.waitMs(), b.waitMs()),
  };
}
