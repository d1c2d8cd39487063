import type { Config } from '../config/config.ts';
import type { Priority } from '../notifications/model.ts';

/** The retry policy (HERALD_RETRY_*), from config.dispatch. */
export type RetryPolicy = Pick<
  Config['dispatch'],
  'retryBaseMs' | 'retryMaxMs' | 'retryMaxMsCritical' | 'retryMaxAttempts'
>;

/**
 * Exponential backoff with full jitter, the one schedule of Herald's retries (deliveries and
 * status callbacks, each with its own base and cap): a uniform draw in
 * [0, min(capMs, baseMs * 2^(attempt-1))] for the attempt after `attempt` (1-based), which
 * spreads the retries of a burst of failures instead of sending them back in lockstep.
 */
export function backoff(
  baseMs: number,
  capMs: number,
  attempt: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(attempt - 1, 30));
  return Math.floor(random() * ceiling);
}

/**
 * Delay before a delivery's attempt after `attempt`: backoff with the policy's base and its cap
 * for the priority. A provider's Retry-After is a floor: never sooner than it asked, even above
 * the cap.
 */
export function retryDelay(
  policy: RetryPolicy,
  priority: Priority,
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  const cap = priority === 'CRITICAL' ? policy.retryMaxMsCritical : policy.retryMaxMs;
  return Math.max(backoff(policy.retryBaseMs, cap, attempt, random), retryAfterMs ?? 0);
}
