import type { Config } from '../config/config.ts';
import type { Priority } from '../notifications/model.ts';

/** The retry policy (HERALD_RETRY_*), from config.dispatch. */
export type RetryPolicy = Pick<
  Config['dispatch'],
  'retryBaseMs' | 'retryMaxMs' | 'retryMaxMsCritical' | 'retryMaxAttempts'
>;

/**
 * Delay before the attempt after `attempt` (1-based): exponential backoff with full jitter
 * (a uniform draw in [0, min(cap, base * 2^(attempt-1))]), which spreads retries of a burst of
 * failures instead of sending them back in lockstep. A provider's Retry-After is a floor: never
 * sooner than it asked, even above the cap.
 */
export function retryDelay(
  policy: RetryPolicy,
  priority: Priority,
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  const cap = priority === 'CRITICAL' ? policy.retryMaxMsCritical : policy.retryMaxMs;
  const ceiling = Math.min(cap, policy.retryBaseMs * 2 ** Math.min(attempt - 1, 30));
  const jittered = Math.floor(random() * ceiling);
  return Math.max(jittered, retryAfterMs ?? 0);
}
