import type { Clock } from '../clock.ts';
import { type Rank, reserveCaps, roomFor } from '../reserve.ts';

/**
 * A provider's rate limit as the scheduler consults it before every send, for a send of priority
 * `rank` (0 CRITICAL .. 3 LOW): part of the rate is kept for CRITICAL and HIGH (reserve.ts).
 */
export interface RateLimiter {
  /** Sends of `rank` that may start now. */
  available(rank: Rank): number;
  tryTake(rank: Rank): boolean;
  /** Milliseconds until one more send of `rank` may start (0 when one may now). */
  waitMs(rank: Rank): number;
}

/**
 * The one rate limiter of a provider, owned by dispatch: at most `perWindow` sends start in any
 * rolling window (one second by default), LOW at most half of them and NORMAL and LOW together at
 * most three quarters. A sliding log rather than a token bucket, because a bucket full at the
 * edge of a second lets up to twice the rate through (nodemailer's own pool limit does this,
 * which the SMTP burst test caught); providers therefore keep no window of their own. Memory: the
 * start times and ranks of the last window's sends only.
 */
export function createRateWindow(clock: Clock, perWindow: number, windowMs = 1000): RateLimiter {
  const caps = reserveCaps(perWindow);
  const starts: number[] = [];
  const ranks: number[] = [];
  const used: [number, number, number, number] = [0, 0, 0, 0];
  let head = 0;
  const evict = () => {
    const now = clock.now();
    while (head < starts.length && now - (starts[head] as number) >= windowMs) {
      const rank = ranks[head] as number;
      used[rank] = (used[rank] as number) - 1;
      head++;
    }
    // Drop what has left the window now and then, not on every call.
    if (head > 1024 && head * 2 > starts.length) {
      starts.splice(0, head);
      ranks.splice(0, head);
      head = 0;
    }
  };
  return {
    available(rank) {
      evict();
      return roomFor(rank, used, caps);
    },
    tryTake(rank) {
      evict();
      if (roomFor(rank, used, caps) <= 0) return false;
      starts.push(clock.now());
      ranks.push(rank);
      used[rank] = (used[rank] as number) + 1;
      return true;
    },
    waitMs(rank) {
      evict();
      if (roomFor(rank, used, caps) > 0) return 0;
      // Full for this rank: the first start whose leaving the window makes room decides.
      const left: [number, number, number, number] = [...used];
      for (let i = head; i < starts.length; i++) {
        const r = ranks[i] as number;
        left[r] = (left[r] as number) - 1;
        if (roomFor(rank, left, caps) > 0) return Math.max(1, (starts[i] as number) + windowMs - clock.now());
      }
      return windowMs;
    },
  };
}

/** Both limits at once: a send starts only when each allows it (a worker's window and the shared pool). */
export function bothLimits(a: RateLimiter, b: RateLimiter): RateLimiter {
  return {
    available: (rank) => Math.min(a.available(rank), b.available(rank)),
    tryTake: (rank) => a.available(rank) > 0 && b.available(rank) > 0 && a.tryTake(rank) && b.tryTake(rank),
    waitMs: (rank) => Math.max(a.waitMs(rank), b.waitMs(rank)),
  };
}
