import type { Principal } from './principal.ts';

interface Entry {
  principal: Principal;
  /** Epoch ms from which the token is refused: exp plus the clock tolerance (as jose counts it). */
  validUntil: number;
  kid: string | undefined;
}

/**
 * Verified access tokens, keyed by the whole token string, so a reused token costs one hash
 * lookup instead of an ES256 verification (~140 µs). Bounded: when full, the oldest insertion
 * is evicted (a Map iterates in insertion order, so that is O(1)). Only successes are cached,
 * so junk tokens cannot fill it with entries that push real ones out any faster than real
 * traffic does. An entry is dropped once its token would no longer pass the `exp` check.
 */
export class VerifyCache {
  private readonly entries = new Map<string, Entry>();
  readonly maxSize: number;

  /** `maxSize` 0 disables the cache. */
  constructor(maxSize: number) {
    this.maxSize = maxSize;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The cached principal if the token is cached, still within `exp` and (if given) its key is still published. */
  get(token: string, now: number, keyAlive?: (kid: string) => boolean): Principal | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (now >= entry.validUntil || (entry.kid !== undefined && keyAlive && !keyAlive(entry.kid))) {
      this.entries.delete(token);
      return undefined;
    }
    return entry.principal;
  }

  set(token: string, principal: Principal, validUntil: number, kid: string | undefined): void {
    if (this.maxSize <= 0) return;
    if (this.entries.size >= this.maxSize && !this.entries.has(token)) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(token, { principal, validUntil, kid });
  }

  clear(): void {
    this.entries.clear();
  }
}
