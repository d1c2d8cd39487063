import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import { HeraldError } from '../errors.ts';
import type { AuthStore } from '../store/port/auth.ts';

/** Login throttling in the database, so every instance shares the counts (README, "Authentication"). */
export interface LoginThrottle {
  /** Throws 429 RATE_LIMITED with Retry-After when the email or the address is over its limit. */
  check(email: string, address: string): Promise<void>;
  /** Counts one failed login for both the email and the address. */
  fail(email: string, address: string): Promise<void>;
}

export function createLoginThrottle(store: AuthStore, clock: Clock, config: Config): LoginThrottle {
  const windowMs = config.auth.loginWindowSeconds * 1000;
  const limits = {
    email: config.auth.loginMaxFailures,
    address: config.auth.loginMaxFailuresPerAddress,
  } as const;

  // Sliding window: with `limit` failures inside it, the caller waits until the oldest of the
  // newest `limit` leaves the window, at which point the count drops below the limit.
  async function blockedFor(by: 'email' | 'address', key: string, now: number): Promise<number> {
    const limit = limits[by];
    const times = await store.recentLoginFailures(by, key, now - windowMs, limit);
    if (times.length < limit) return 0;
    return (times[limit - 1] as number) + windowMs - now;
  }

  return {
    async check(email, address) {
      const now = clock.now();
      const wait = Math.max(await blockedFor('email', email, now), await blockedFor('address', address, now));
      if (wait > 0) {
        throw new HeraldError('RATE_LIMITED', 'Too many failed logins; try again later.', {
          retryAfterS: wait / 1000,
        });
      }
    },
    async fail(email, address) {
      const now = clock.now();
      await store.recordLoginFailure(email, address, now);
      await store.pruneLoginFailures(now - windowMs);
    },
  };
}
