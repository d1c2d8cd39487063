import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { openPrivateKey, sealPrivateKey } from '../auth/key-crypto.ts';
import type { Clock } from '../clock.ts';
import { CHANNELS, type Channel } from '../notifications/model.ts';
import type { AuthStore } from '../store/port/auth.ts';

/** The server secret holding the unsubscribe keys (server_secrets, sealed like a signing key). */
const SECRET_NAME = 'unsubscribe-keys';
/** Bound into every token, so no other AES-GCM payload of Herald's passes for one. */
const AAD = Buffer.from('herald-unsubscribe-v1');
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** An unknown key id makes the key set be read again at most this often (a rotation elsewhere). */
const RELOAD_MS = 5_000;
/** New links use a key rotated elsewhere within this long. */
const MAX_AGE_MS = 60_000;

/** What an unsubscribe link stands for: one recipient of one tenant on one channel. */
export interface UnsubscribeTarget {
  tenant: string;
  channel: Channel;
  /** The recipient's suppression key. */
  recipient: string;
  /**
   * An email to a person (docs/preferences.md): its recipientId and the email's category. The link then
   * opts that person out of the category on email (of email when null) instead of suppressing.
   */
  person?: { id: string; category: string | null };
}

/** The stored key set: every key ever made, by id, and the one new links use. */
interface KeySet {
  current: number;
  keys: Record<string, string>;
}

/**
 * One-click unsubscribe tokens (RFC 8058): AES-256-GCM over the tenant, channel and recipient,
 * so a token is authenticated (its tag is the MAC: a forged or altered one opens to nothing)
 * and opaque (the address is not readable from a link that gets logged or forwarded). A token
 * names the key it was made with; rotation adds a key and keeps the old ones, so every link
 * already in an inbox keeps working for as long as it stays there.
 */
export interface UnsubscribeTokens {
  make(target: UnsubscribeTarget): Promise<string>;
  /** The target of a genuine token; undefined for anything else. */
  open(token: string): Promise<UnsubscribeTarget | undefined>;
  /** Makes a new key the one new links use; returns its id and how many keys are kept. */
  rotate(): Promise<{ kid: number; kept: number }>;
}

export function createUnsubscribeTokens(
  store: Pick<AuthStore, 'serverSecret' | 'setServerSecret'>,
  clock: Clock,
  encryptionSecret: string | undefined,
): UnsubscribeTokens {
  let loaded: Promise<KeySet> | undefined;
  let loadedAt = 0;
  const seal = (set: KeySet) => sealPrivateKey(JSON.stringify(set), SECRET_NAME, encryptionSecret);
  const read = async (): Promise<KeySet> => {
    const first: KeySet = { current: 1, keys: { 1: randomBytes(32).toString('base64url') } };
    const stored = await store.serverSecret(SECRET_NAME, seal(first), clock.now());
    return JSON.parse(openPrivateKey(stored, SECRET_NAME, encryptionSecret)) as KeySet;
  };
  const keys = (maxAge = Number.POSITIVE_INFINITY) => {
    if (clock.now() - loadedAt >= maxAge) loaded = undefined;
    if (!loaded) {
      loadedAt = clock.now();
      loaded = read().catch((error) => {
        loaded = undefined; // a database hiccup is not forever
        throw error;
      });
    }
    return loaded;
  };
  const keyOf = (set: KeySet, kid: number) => {
    const key = set.keys[String(kid)];
    return key === undefined ? undefined : Buffer.from(key, 'base64url');
  };
  return {
    async make(target) {
      const set = await keys(MAX_AGE_MS);
      const key = keyOf(set, set.current) as Buffer;
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(AAD);
      const fields: unknown[] = [target.tenant, target.channel, target.recipient];
      if (target.person) fields.push([target.person.id, target.person.category]);
      const plain = JSON.stringify(fields);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      const kid = Buffer.alloc(2);
      kid.writeUInt16BE(set.current);
      return Buffer.concat([kid, iv, cipher.getAuthTag(), body]).toString('base64url');
    },
    async open(token) {
      if (!/^[A-Za-z0-9_-]{40,2048}$/.test(token)) return undefined;
      const raw = Buffer.from(token, 'base64url');
      // Only the one canonical spelling: base64url's last character carries spare bits that
      // decoding ignores, so without this a few changed tokens would still open.
      if (raw.toString('base64url') !== token) return undefined;
      if (raw.length <= 2 + IV_BYTES + TAG_BYTES) return undefined;
      const kid = raw.readUInt16BE(0);
      let key = keyOf(await keys(), kid);
      if (!key) key = keyOf(await keys(RELOAD_MS), kid);
      if (!key) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(2, 2 + IV_BYTES), {
          authTagLength: TAG_BYTES,
        });
        decipher.setAAD(AAD);
        decipher.setAuthTag(raw.subarray(2 + IV_BYTES, 2 + IV_BYTES + TAG_BYTES));
        const plain = Buffer.concat([
          decipher.update(raw.subarray(2 + IV_BYTES + TAG_BYTES)),
          decipher.final(),
        ]).toString('utf8');
        const [tenant, channel, recipient, person] = JSON.parse(plain) as [
          string,
          Channel,
          string,
          [string, string | null]?,
        ];
        if (!CHANNELS.includes(channel)) return undefined;
        if (person === undefined) return { tenant, channel, recipient };
        return { tenant, channel, recipient, person: { id: person[0], category: person[1] } };
      } catch {
        return undefined; // the tag did not verify: forged or altered
      }
    },
    async rotate() {
      const set = await read();
      const kid = Math.max(...Object.keys(set.keys).map(Number)) + 1;
      if (kid > 0xffff) throw new Error('no unsubscribe key id left');
      const next: KeySet = {
        current: kid,
        keys: { ...set.keys, [kid]: randomBytes(32).toString('base64url') },
      };
      await store.setServerSecret(SECRET_NAME, seal(next));
      loaded = undefined;
      return { kid, kept: Object.keys(next.keys).length };
    },
  };
}
