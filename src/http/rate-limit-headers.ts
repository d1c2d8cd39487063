import type { RateLimitState } from '../errors.ts';

/**
 * The IETF RateLimit-Policy and RateLimit fields, in the syntax of draft-ietf-httpapi-ratelimit-headers-10
 * (structured-field lists: `"name";q=100;w=1` for a policy, `"name";r=42;t=1` for its state):
 * every quota policy that applies, each with its remaining units and seconds until it is full again.
 * Both answer a quota's 429 (with Retry-After) and its successful acceptances (docs/quotas.md).
 */
export function rateLimitHeaders(states: readonly RateLimitState[]): Record<string, string> {
  if (states.length === 0) return {};
  return {
    'RateLimit-Policy': states.map((s) => `"${s.policy}";q=${s.quota};w=${s.windowS}`).join(', '),
    RateLimit: states
      .map(
        (s) =>
          `"${s.policy}";r=${Math.max(0, Math.floor(s.remaining))};t=${Math.max(0, Math.ceil(s.resetS))}`,
      )
      .join(', '),
  };
}
