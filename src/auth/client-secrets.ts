import { createHmac } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { safeEqual } from '../safe-equal.ts';
import type { AuthStore } from '../store/port/auth.ts';
import type { GateTurn } from './argon2-gate.ts';
import { verifySecret } from './passwords.ts';
import { createServerKey } from './server-key.ts';

const PREFIX = 'hmac-sha256:';
/** The server secret the digests are keyed with (server_secrets, sealed like a signing key). */
const KEY_NAME = 'client-secret-mac';

/**
 * Client secrets are 256 random bits, so a slow password hash adds nothing against guessing and
 * makes every bad secret cost argon2. They are stored as HMAC-SHA-256 digests keyed by a server
 * secret (a stolen database alone does not let anyone check a guess) and compared in constant
 * time. Digests stored with argon2 before this are checked once more with argon2 and replaced.
 */
export interface ClientSecrets {
  /** The stored form of a secret. */
  digest(secret: string): Promise<string>;
  /**
   * Whether `secret` matches `stored` (an unknown client, `undefined`, costs the same digest);
   * `upgrade` is the digest to store in place of an argon2 hash that matched, which is checked
   * as `turn`'s argon2 work.
   */
  verify(
    stored: string | undefined,
    secret: string,
    turn: GateTurn,
  ): Promise<{ ok: boolean; upgrade?: string }>;
  /** With an encryption secret, seals the digest key if it was stored in plaintext; whether it did. */
  sealAtRest(): Promise<boolean>;
}

export function createClientSecrets(
  store: AuthStore,
  clock: Clock,
  encryptionSecret: string | undefined,
): ClientSecrets {
  const key = createServerKey(store, clock, KEY_NAME, encryptionSecret);
  return {
    async digest(secret) {
      return (
        PREFIX +
        createHmac('sha256', await key.get())
          .update(secret)
          .digest('base64url')
      );
    },
    sealAtRest: () => key.sealAtRest(),
    async verify(stored, secret, turn) {
      if (stored !== undefined && !stored.startsWith(PREFIX)) {
        const ok = await verifySecret(stored, secret, turn);
        return ok ? { ok, upgrade: await this.digest(secret) } : { ok };
      }
      const given = await this.digest(secret);
      // Compared even for an unknown client (against itself), so both cost the same.
      return { ok: safeEqual(given, stored ?? given) && stored !== undefined };
    },
  };
}
