/**
 * Milliseconds to wait from a Retry-After header: delta-seconds or an HTTP date (RFC 9110
 * 10.2.3), from `now`. Undefined when absent or unreadable, so the scheduler's own backoff
 * applies; never negative.
 */
export function retryAfterMs(value: string | string[] | null | undefined, now: number): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return undefined;
  const trimmed = raw.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
