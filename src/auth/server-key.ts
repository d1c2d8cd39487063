import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { AuthStore } from '../store/port/auth.ts';
import { isSealed, openPrivateKey, sealPrivateKey } from './key-crypto.ts';

/**
 * A 256-bit key the server keeps in server_secrets under one name (the client-secret digests'
 * key, the recipient digests' key): made by whichever instance needs it first (insert if absent,
 * then read back, so every instance uses the same), sealed like a private signing key when
 * HERALD_KEY_ENCRYPTION_SECRET is set (key-crypto.ts). Never logged.
 */
export interface ServerKey {
  get(): Promise<Buffer>;
  /** With an encryption secret, seals the key if it was stored in plaintext; whether it did. */
  sealAtRest(): Promise<boolean>;
}

export function createServerKey(
  store: Pick<AuthStore, 'serverSecret' | 'setServerSecret'>,
  clock: Clock,
  name: string,
  encryptionSecret: string | undefined,
): ServerKey {
  let key: Promise<Buffer> | undefined;
  const stored = () =>
    store.serverSecret(
      name,
      sealPrivateKey(randomBytes(32).toString('base64url'), name, encryptionSecret),
      clock.now(),
    );
  return {
    get() {
      key ??= (async () =>
        Buffer.from(openPrivateKey(await stored(), name, encryptionSecret), 'base64url'))().catch((error) => {
        key = undefined; // try again next time (a database hiccup is not forever)
        throw error;
      });
      return key;
    },
    async sealAtRest() {
      if (!encryptionSecret) return false;
      const value = await stored();
      if (isSealed(value)) return false;
      await store.setServerSecret(name, sealPrivateKey(value, name, encryptionSecret));
      return true;
    },
  };
}
