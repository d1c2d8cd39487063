/**
 * A Retry-After header value in ms from `now`: delta-seconds or an HTTP date (RFC 9110 10.2.3).
 * Undefined when absent or unreadable; never negative.
 */
export function retryAfterMs(value: string | null | undefined, now: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
