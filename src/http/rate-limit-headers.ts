import type { RateLimitState } from '../errors.ts';

/**
 * The IETF RateLimit-Policy and RateLimit fields, in the syntax of draft-ietf-httpapi-ratelimit-headers-10
 * (structured-field lists: `"name";q=100;w=1` for a policy, `"name";r=42;t=1` for its state):
 * every quota policy that applies, each with its remaining units and seconds until it is full again.
 * Both answer a quota's 429 (with Retry-After) and its successful acceptances (docs/quotas.md).
 * `policy` is the RateLimit-Policy field when the caller keeps it (it changes only with the limits).
 */
export function rateLimitHeaders(
  states: readonly RateLimitState[],
  policy = rateLimitPolicy(states),
): Record<string, string> {
  if (states.length === 0) return {};
  let state = '';
  for (const s of states) {
    if (state !== '') state += ', ';
    state += `"${s.policy}";r=${Math.max(0, Math.floor(s.remaining))};t=${Math.max(0, Math.ceil(s.resetS))}`;
  }
  return { 'RateLimit-Policy': policy, RateLimit: state };
}

/** The RateLimit-Policy field of these limits: each one's quota per window. */
export function rateLimitPolicy(
  limits: ReadonlyArray<Pick<RateLimitState, 'policy' | 'quota' | 'windowS'>>,
): string {
  return limits.map((s) => `"${s.policy}";q=${s.quota};w=${s.windowS}`).join(', ');
}
