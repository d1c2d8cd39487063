import { createHmac } from 'node:crypto';
import { createServerKey } from '../auth/server-key.ts';
import type { Clock } from '../clock.ts';
import { safeEqual } from '../safe-equal.ts';
import type { AuthStore } from '../store/port/auth.ts';
import type { RecipientKey } from '../store/port/recipients.ts';

/** The server secret keying the preferences links (server_secrets, sealed like a signing key). */
const KEY_NAME = 'preferences-key';
/** Bound into every MAC, so no other HMAC of Herald's under this key passes for one. */
const CONTEXT = 'herald-preferences-v1';

/**
 * A recipient's preferences link (docs/preferences.md, `preferencesUrl`): `<payload>.<mac>`, the payload
 * the tenant and recipient ID as base64url JSON, the MAC an HMAC-SHA-256 over it. One token per
 * recipient, in one spelling: a token opens only if it is exactly the one `make` gives, so an
 * altered payload, MAC or encoding (padding, another alphabet) is refused.
 */
export interface PreferenceTokens {
  make(recipient: RecipientKey): Promise<string>;
  /** The recipient of a genuine token; undefined for anything else. */
  open(token: string): Promise<RecipientKey | undefined>;
}

export function createPreferenceTokens(
  store: Pick<AuthStore, 'serverSecret' | 'setServerSecret'>,
  clock: Clock,
  encryptionSecret: string | undefined,
): PreferenceTokens {
  const key = createServerKey(store, clock, KEY_NAME, encryptionSecret);
  const mac = async (payload: string) =>
    createHmac('sha256', await key.get())
      .update(`${CONTEXT}.${payload}`)
      .digest('base64url');
  const make = async ({ tenant, id }: RecipientKey) => {
    const payload = Buffer.from(JSON.stringify([tenant, id])).toString('base64url');
    return `${payload}.${await mac(payload)}`;
  };
  return {
    make,
    async open(token) {
      const [payload, given, extra] = token.split('.');
      if (!payload || !given || extra !== undefined || token.length > 1024) return undefined;
      if (!safeEqual(given, await mac(payload))) return undefined;
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        return undefined;
      }
      if (!Array.isArray(parsed) || parsed.length !== 2) return undefined;
      const [tenant, id] = parsed as unknown[];
      if (typeof tenant !== 'string' || typeof id !== 'string') return undefined;
      // Canonical: the one token made for this recipient, not another spelling of it.
      return (await make({ tenant, id })) === token ? { tenant, id } : undefined;
    },
  };
}
