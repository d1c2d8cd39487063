import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  type JWTHeaderParameters,
} from 'jose';
import type { Clock } from '../clock.ts';
import type { JwtAlg } from '../config/config.ts';
import type { AuthStore, SigningKeyRecord } from '../store/port/auth.ts';
import { isSealed, openPrivateKey, sealPrivateKey } from './key-crypto.ts';

/** Accepted token lateness: a token is valid until 30 s after its `exp` (and from 30 s before `nbf`/`iat`). */
export const CLOCK_TOLERANCE_S = 30;
/** An unknown `kid` triggers a re-read at most this often, so junk kids cannot hammer the store. */
const UNKNOWN_KID_RELOAD_MS = 5_000;

interface LoadedKey {
  kid: string;
  alg: string;
  publicJwk: JWK;
  publicKey: CryptoKey;
  record: SigningKeyRecord;
  active: boolean;
}

/** What the keyring needs to know. */
export interface KeyringOptions {
  store: AuthStore;
  clock: Clock;
  /** Algorithm of newly made keys (config.auth.alg). */
  alg: JwtAlg;
  /** HERALD_KEY_ENCRYPTION_SECRET. */
  secret: string | undefined;
  /** Longest lifetime of any token a key signs (seconds): retired keys stay published that long. */
  maxTokenTtl: number;
  /** How often the key table is re-read, so a rotation by another instance is seen (HERALD_KEY_RELOAD_MS). */
  reloadMs: number;
}

/** The signing keys of the store, loaded and imported once, re-read when stale. */
export interface Keyring {
  /** Makes the first key when the store has none, and prunes keys whose last token expired. */
  ensureActive(): Promise<void>;
  /** The active key with its private part, for signing. */
  signingKey(): Promise<{ kid: string; alg: string; key: CryptoKey }>;
  /** jose key resolver: the published public key for the header's kid and alg, or throws. */
  resolve(header: JWTHeaderParameters): Promise<CryptoKey>;
  /** Whether `kid` is still published (used by the verify cache on every hit). */
  isPublished(kid: string): boolean;
  /** Re-reads the store if the last read is older than the reload interval. */
  refreshIfStale(): Promise<void>;
  /** Public JWKs of every published key (active and retired-but-unexpired). */
  jwks(): Promise<JWK[]>;
  /** Makes a new active key; the old one stays published until its last token expired. */
  rotate(): Promise<{ kid: string; retired: string | undefined }>;
  /** With a secret, seals every private key stored in plaintext (an earlier start without one); how many. */
  sealAtRest(): Promise<number>;
}

/** Generates a key pair for `alg` and returns the record to store (private part sealed). */
export async function makeKeyRecord(alg: JwtAlg, secret: string | undefined, now: number) {
  const pair = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(pair.publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwk = JSON.stringify({ ...(await exportJWK(pair.privateKey)), kid, alg });
  const record: SigningKeyRecord = {
    kid,
    alg,
    publicJwk: JSON.stringify({ ...publicJwk, kid, alg, use: 'sig' }),
    privateJwk: sealPrivateKey(privateJwk, kid, secret),
    createdAt: now,
    retiredAt: null,
    publishUntil: null,
  };
  return record;
}

/** Builds the keyring over the store's `signing_keys`. */
export function createKeyring(options: KeyringOptions): Keyring {
  const { store, clock } = options;
  let keys = new Map<string, LoadedKey>();
  let loadedAt = Number.NEGATIVE_INFINITY;
  let loading: Promise<void> | undefined;
  const privateKeys = new Map<string, CryptoKey>();

  const published = (key: LoadedKey, now: number) =>
    key.active || (key.record.publishUntil !== null && key.record.publishUntil >= now);

  async function load(): Promise<void> {
    const records = await store.listSigningKeys();
    const next = new Map<string, LoadedKey>();
    for (const record of records) {
      const known = keys.get(record.kid);
      const active = record.retiredAt === null;
      if (known) {
        next.set(record.kid, { ...known, record, active });
        continue;
      }
      const publicJwk = JSON.parse(record.publicJwk) as JWK;
      const publicKey = (await importJWK(publicJwk, record.alg)) as CryptoKey;
      next.set(record.kid, { kid: record.kid, alg: record.alg, publicJwk, publicKey, record, active });
    }
    keys = next;
    loadedAt = clock.now();
  }

  // One read at a time: concurrent callers share the pending one.
  function reload(): Promise<void> {
    loading ??= load().finally(() => {
      loading = undefined;
    });
    return loading;
  }

  const active = () => [...keys.values()].find((key) => key.active);

  return {
    async ensureActive() {
      if (active()) return;
      await store.deleteExpiredSigningKeys(clock.now());
      await reload();
      if (!active()) {
        // A concurrent instance may win the insert; either way one active key results.
        await store.insertFirstSigningKey(await makeKeyRecord(options.alg, options.secret, clock.now()));
        await reload();
      }
    },
    async signingKey() {
      await this.refreshIfStale();
      let key = active();
      if (!key) {
        await this.ensureActive();
        key = active();
      }
      if (!key) throw new Error('No active signing key');
      let privateKey = privateKeys.get(key.kid);
      if (!privateKey) {
        const jwk = JSON.parse(openPrivateKey(key.record.privateJwk, key.kid, options.secret)) as JWK;
        privateKey = (await importJWK(jwk, key.alg)) as CryptoKey;
        privateKeys.set(key.kid, privateKey);
      }
      return { kid: key.kid, alg: key.alg, key: privateKey };
    },
    async resolve(header) {
      await this.refreshIfStale();
      const kid = header.kid;
      if (typeof kid !== 'string' || kid.length > 128) throw new Error('no usable kid');
      let key = keys.get(kid);
      if (!key && clock.now() - loadedAt > UNKNOWN_KID_RELOAD_MS) {
        await reload();
        key = keys.get(kid);
      }
      if (!key || !published(key, clock.now()) || key.alg !== header.alg) throw new Error('unknown kid');
      return key.publicKey;
    },
    isPublished(kid) {
      const key = keys.get(kid);
      return key !== undefined && published(key, clock.now());
    },
    async refreshIfStale() {
      if (clock.now() - loadedAt > options.reloadMs || clock.now() < loadedAt) await reload();
    },
    async jwks() {
      await this.refreshIfStale();
      const now = clock.now();
      return [...keys.values()].filter((key) => published(key, now)).map((key) => key.publicJwk);
    },
    async sealAtRest() {
      if (!options.secret) return 0;
      let sealed = 0;
      for (const record of await store.listSigningKeys()) {
        if (isSealed(record.privateJwk)) continue;
        await store.setSigningKeyPrivate(
          record.kid,
          sealPrivateKey(record.privateJwk, record.kid, options.secret),
        );
        sealed++;
      }
      if (sealed > 0) await reload();
      return sealed;
    },
    async rotate() {
      const now = clock.now();
      await store.deleteExpiredSigningKeys(now);
      await reload();
      const retired = active()?.kid;
      const record = await makeKeyRecord(options.alg, options.secret, now);
      const publishUntil = now + (options.maxTokenTtl + CLOCK_TOLERANCE_S) * 1000;
      await store.rotateSigningKey(record, now, publishUntil);
      await reload();
      return { kid: record.kid, retired };
    },
  };
}
