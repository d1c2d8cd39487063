import { createHmac } from 'node:crypto';
import { createServerKey } from '../auth/server-key.ts';
import type { Clock } from '../clock.ts';
import type { AuthStore } from '../store/port/auth.ts';
import { suppressionKey } from '../suppressions/model.ts';
import type { Recipient } from './model.ts';
import { RECIPIENT_PATTERNS } from './schemas.ts';

/**
 * A notification's recipient digest: what lets an admin find a tenant's notifications to one
 * exact address (GET /notifications?recipient=) through an index, without a new copy of the
 * address in clear (docs/security.md, "Recipient digests").
 *
 *   tenant key = HMAC-SHA-256(server key, "herald-recipient-v1" NUL tenant)
 *   digest     = base64url(HMAC-SHA-256(tenant key, address))
 *
 * The server key is a server secret (`recipient-digest`, made at first use, sealed like a signing
 * key). Keyed, so a copy of the database alone cannot test a guessed address against it; per
 * tenant, so one address sent to by two tenants has two unrelated digests. The address is the
 * recipient's suppression key (suppressions/model.ts): an email lower-cased whole (local part
 * included, as mailbox providers treat it in practice), a phone in E.164, a push endpoint or a
 * device token as given.
 */

/** The server secret the digests are keyed with (server_secrets). */
const KEY_NAME = 'recipient-digest';
/** Bound into every tenant key, so the key serves this purpose only. */
const PURPOSE = 'herald-recipient-v1\u0000';

/** One tenant's digest key, from the server key. */
export function tenantDigestKey(serverKey: Uint8Array, tenant: string): Buffer {
  return createHmac('sha256', serverKey)
    .update(PURPOSE + tenant)
    .digest();
}

/** The digest of an address (already normalized: suppressionKey, searchedAddress) under a tenant key. */
export function addressDigest(tenantKey: Uint8Array, address: string): string {
  return createHmac('sha256', tenantKey).update(address).digest('base64url');
}

/** The digest of an accepted notification's recipient under its tenant's key. */
export function recipientDigest(tenantKey: Uint8Array, recipient: Recipient): string | null {
  const address = suppressionKey(recipient);
  return address === undefined ? null : addressDigest(tenantKey, address);
}

const EMAIL = new RegExp(RECIPIENT_PATTERNS.email);
const PHONE = new RegExp(RECIPIENT_PATTERNS.phone);
const ENDPOINT = new RegExp(RECIPIENT_PATTERNS.endpoint);
const DEVICE_TOKEN = new RegExp(RECIPIENT_PATTERNS.deviceToken);
/** What a phone number may be written with besides its digits: `+1 (555) 010-1234`. */
const PHONE_SEPARATORS = /[\s().-]/g;

/**
 * A searched address as a recipient's digest is made of it, or undefined when it is no address
 * Herald accepts: an email (with `@`; trimmed, lower-cased), a phone (starting with `+`; spaces,
 * dots, dashes and brackets dropped, then E.164), a push endpoint (`https://`), else a device
 * token (8 characters or more), each as acceptance checks it.
 */
export function searchedAddress(text: string): string | undefined {
  const value = text.trim();
  if (value.includes('@')) {
    return value.length <= 254 && EMAIL.test(value) ? value.toLowerCase() : undefined;
  }
  if (value.startsWith('+')) {
    const phone = value.replace(PHONE_SEPARATORS, '');
    if (PHONE.test(phone)) return phone;
  }
  if (value.startsWith('https://')) return ENDPOINT.test(value) ? value : undefined;
  return value.length >= 8 && DEVICE_TOKEN.test(value) ? value : undefined;
}

/** The tenants' digest keys of a process, from the one stored server key. */
export interface RecipientDigests {
  /** A tenant's key (batch threads digest with it: batch-items.ts). */
  tenantKey(tenant: string): Promise<Buffer>;
  /**
   * At start-up: makes the server key if there is none, seals it if it was stored in plaintext
   * before an encryption secret was set, and opens it (a wrong secret fails start-up, not the
   * first notification).
   */
  open(): Promise<void>;
}

/** Tenant keys kept; past it the cache starts again (a key is one HMAC to make). */
const TENANT_KEYS_KEPT = 10_000;

export function createRecipientDigests(
  store: Pick<AuthStore, 'serverSecret' | 'setServerSecret'>,
  clock: Clock,
  encryptionSecret: string | undefined,
): RecipientDigests {
  const serverKey = createServerKey(store, clock, KEY_NAME, encryptionSecret);
  const keys = new Map<string, Buffer>();
  return {
    async tenantKey(tenant) {
      const known = keys.get(tenant);
      if (known) return known;
      const key = tenantDigestKey(await serverKey.get(), tenant);
      if (keys.size >= TENANT_KEYS_KEPT) keys.clear();
      keys.set(tenant, key);
      return key;
    },
    async open() {
      await serverKey.sealAtRest();
      await serverKey.get();
    },
  };
}
