import type { Clock } from '../clock.ts';

/** A token bucket: `ratePerSecond` refill up to `burst`. One per provider, in the worker's memory. */
export interface TokenBucket {
  /** Whole tokens available now. */
  available(): number;
  tryTake(): boolean;
  /** Milliseconds until one token is available (0 when one is). */
  waitMs(): number;
}

export function createTokenBucket(clock: Clock, ratePerSecond: number, burst: number): TokenBucket {
  let tokens = burst;
  let last = clock.now();
  const refill = () => {
    const now = clock.now();
    if (now > last) {
      tokens = Math.min(burst, tokens + ((now - last) * ratePerSecond) / 1000);
      last = now;
    }
  };
  return {
    available() {
      refill();
      return Math.floor(tokens);
    },
    tryTake() {
      refill();
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    },
    waitMs() {
      refill();
      return tokens >= 1 ? 0 : Math.ceil(((1 - tokens) * 1000) / ratePerSecond);
    },
  };
}
