import type { Clock } from '../clock.ts';
import { HeraldError } from '../errors.ts';
import type { AttemptClaim, AuthStore } from '../store/port/auth.ts';
import { throttleKey } from './client-address.ts';

/** A counted attempt: it stays counted (a failure) unless uncounted. */
export interface Attempt {
  /** Uncounts it: a success (which neither counts nor resets), or a try never checked (503). */
  uncount(): Promise<void>;
}

/**
 * Throttling of one kind of credential check (README, "Authentication"), in the database so
 * every instance shares the counts. An attempt is counted before the check runs, atomically with
 * reading the counts (AuthStore.claimAttempt), so attempts in flight count: a parallel burst
 * gets at most the remaining allowance checked and 429 for the rest.
 */
export interface Throttle {
  /**
   * Counts an attempt for `subject` (an email, a client id) from `address`, or throws 429
   * RATE_LIMITED with Retry-After when either is at its limit within the window.
   */
  attempt(subject: string, address: string): Promise<Attempt>;
  /**
   * An attempt around one credential check: counted before `check` runs, uncounted when it
   * passes (a truthy result) or could not run (it threw: a 503, a database error); a falsy
   * result is a failure and stays counted.
   */
  checked<T>(subject: string, address: string, check: () => Promise<T>): Promise<T>;
}

export interface ThrottleOptions {
  scope: AttemptClaim['scope'];
  windowMs: number;
  limits: AttemptClaim['limits'];
  /** The 429's detail. */
  message: string;
}

/** How often an instance deletes attempts that have left the window. */
const PRUNE_EVERY_MS = 60_000;

export function createThrottle(store: AuthStore, clock: Clock, options: ThrottleOptions): Throttle {
  let prunedAt = Number.NEGATIVE_INFINITY;
  return {
    async attempt(subject, address) {
      const now = clock.now();
      const since = now - options.windowMs;
      if (now - prunedAt >= PRUNE_EVERY_MS) {
        prunedAt = now;
        await store.pruneAttempts(since);
      }
      const claim = await store.claimAttempt({
        scope: options.scope,
        subject,
        address: throttleKey(address),
        now,
        since,
        limits: options.limits,
      });
      if ('blockedBy' in claim) {
        // Sliding window: a place frees when the attempt that filled it leaves the window.
        throw new HeraldError('RATE_LIMITED', options.message, {
          retryAfterS: Math.max(1, claim.blockedBy + options.windowMs - now) / 1000,
        });
      }
      return { uncount: () => store.dropAttempt(claim.id) };
    },
    async checked(subject, address, check) {
      const attempt = await this.attempt(subject, address);
      let result: Awaited<ReturnType<typeof check>>;
      try {
        result = await check();
      } catch (error) {
        await attempt.uncount();
        throw error;
      }
      if (result) await attempt.uncount();
      return result;
    },
  };
}

/** The login, /auth/token and OpenID callback throttles, all with the login limits (HERALD_LOGIN_MAX_FAILURES...). */
export function createAuthThrottles(
  store: AuthStore,
  clock: Clock,
  auth: { loginWindowSeconds: number; loginMaxFailures: number; loginMaxFailuresPerAddress: number },
): Record<Exclude<AttemptClaim['scope'], 'preferences'>, Throttle> {
  const windowMs = auth.loginWindowSeconds * 1000;
  const limits = { subject: auth.loginMaxFailures, address: auth.loginMaxFailuresPerAddress };
  return {
    login: createThrottle(store, clock, {
      scope: 'login',
      windowMs,
      limits,
      message: 'Too many failed logins; try again later.',
    }),
    token: createThrottle(store, clock, {
      scope: 'token',
      windowMs,
      limits,
      message: 'Too many failed client authentications; try again later.',
    }),
    // An OpenID callback names no account before the code is exchanged: counted per address
    // (the caller passes the address as the subject too).
    oidc: createThrottle(store, clock, {
      scope: 'oidc',
      windowMs,
      limits,
      message: 'Too many failed sign-ins; try again later.',
    }),
  };
}
