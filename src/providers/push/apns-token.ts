import { readFile } from 'node:fs/promises';
import { type CryptoKey, importPKCS8, SignJWT } from 'jose';
import type { Clock } from '../../clock.ts';

/**
 * Apple accepts a provider token for up to 60 minutes and answers TooManyProviderTokenUpdates
 * when one is replaced more often than every 20; 50 minutes stays inside both with room for
 * clock skew.
 */
const APNS_TOKEN_MAX_AGE_MS = 50 * 60_000;

/** Raised when the signing key cannot be loaded: a configuration problem, not a delivery one. */
export class ApnsKeyError extends Error {
  override name = 'ApnsKeyError';
}

/** The ES256 provider token (`iss` team id, `iat`, header `kid`), signed once and reused. */
export interface ApnsTokenSource {
  get(): Promise<string>;
  /** Drops `token` (after ExpiredProviderToken) so the next get signs a fresh one. */
  invalidate(token: string): void;
}

export function createApnsTokenSource(options: {
  keyFile: string;
  keyId: string;
  teamId: string;
  clock: Clock;
  maxAgeMs?: number;
}): ApnsTokenSource {
  const maxAgeMs = options.maxAgeMs ?? APNS_TOKEN_MAX_AGE_MS;
  let key: CryptoKey | undefined;
  let current: { token: Promise<string>; issuedAt: number; value?: string } | undefined;

  async function loadKey(): Promise<CryptoKey> {
    if (key) return key;
    let pem: string;
    try {
      pem = await readFile(options.keyFile, 'utf8');
    } catch (error) {
      throw new ApnsKeyError(`APNS_KEY_FILE cannot be read (${(error as NodeJS.ErrnoException).code})`);
    }
    try {
      key = await importPKCS8(pem.trim(), 'ES256');
    } catch {
      // The message of a failed import may quote the key material; keep it out of events and logs.
      throw new ApnsKeyError('APNS_KEY_FILE is not a PKCS#8 P-256 private key (.p8)');
    }
    return key;
  }

  async function sign(issuedAt: number): Promise<string> {
    return new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: options.keyId })
      .setIssuer(options.teamId)
      .setIssuedAt(Math.floor(issuedAt / 1000))
      .sign(await loadKey());
  }

  return {
    get() {
      const now = options.clock.now();
      if (!current || now - current.issuedAt >= maxAgeMs || now < current.issuedAt) {
        const entry: NonNullable<typeof current> = { token: sign(now), issuedAt: now };
        current = entry;
        entry.token.then(
          (value) => {
            entry.value = value;
          },
          // A failed signing (unreadable key) is not cached: the file may be fixed meanwhile.
          () => {
            if (current === entry) current = undefined;
          },
        );
      }
      return current.token;
    },
    invalidate(token) {
      if (current?.value === token) current = undefined;
    },
  };
}
