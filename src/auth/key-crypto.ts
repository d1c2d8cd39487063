import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import { ConfigError } from '../config/config.ts';

const PREFIX = 'enc:v1:';
/** AES-GCM's full 128-bit tag, written and required. */
const TAG_BYTES = 16;

/**
 * The stored private key could not be read: encrypted without a secret, or with another one.
 * A configuration error, so start-up fails with a message naming the variable.
 */
export class KeyDecryptionError extends ConfigError {
  constructor(problem: string) {
    super('HERALD_KEY_ENCRYPTION_SECRET', problem);
    this.name = 'KeyDecryptionError';
  }
}

// scrypt (N=2^14, r=8) makes a guessed secret cost ~16 MiB and ~50 ms each; keys are decrypted
// once per process start, so the cost is paid rarely. A fresh salt per key means one derived
// key never encrypts two records.
function derive(secret: string, salt: Buffer): Buffer {
  return scryptSync(secret, salt, 32, { N: 16384, r: 8, p: 1 });
}

/**
 * Seals a private JWK for the store: AES-256-GCM with a scrypt-derived key when a secret is
 * configured (HERALD_KEY_ENCRYPTION_SECRET), else the JSON as is. `kid` is bound as associated
 * data, so a sealed key cannot be swapped onto another row.
 */
export function sealPrivateKey(json: string, kid: string, secret: string | undefined): string {
  if (!secret) return json;
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', derive(secret, salt), iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(kid));
  const body = Buffer.concat([cipher.update(json, 'utf8'), cipher.final()]);
  const parts = [salt, iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url'));
  return PREFIX + parts.join(':');
}

/** Whether a stored value is sealed (by `sealPrivateKey` with a secret). */
export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/** Opens what `sealPrivateKey` stored; throws KeyDecryptionError when the secret is missing or wrong. */
export function openPrivateKey(stored: string, kid: string, secret: string | undefined): string {
  if (!isSealed(stored)) return stored;
  if (!secret) {
    throw new KeyDecryptionError(
      'is not set, but the keys in the store are encrypted: set it to the secret they were stored with.',
    );
  }
  const [salt, iv, tag, body] = stored
    .slice(PREFIX.length)
    .split(':')
    .map((part) => Buffer.from(part, 'base64url'));
  // The tag length is pinned: a shorter tag would be checked only as far as it goes.
  if (!salt || !iv || iv.length !== 12 || !tag || tag.length !== TAG_BYTES || !body)
    throw new KeyDecryptionError(`cannot read key ${kid}: the stored value is corrupt.`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', derive(secret, salt), iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(kid));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  } catch {
    throw new KeyDecryptionError(
      `does not decrypt key ${kid} (a different secret than the one it was stored with?).`,
    );
  }
}
