import { timingSafeEqual } from 'node:crypto';

/**
 * Constant-time equality of two strings (signatures, nonces, digests): unequal lengths are
 * unequal without an early exit on content, and a wrong length costs the same as a wrong value.
 */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  if (left.length !== right.length) {
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}
