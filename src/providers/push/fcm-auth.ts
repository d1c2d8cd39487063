import { readFile } from 'node:fs/promises';
import { type CryptoKey, importPKCS8, SignJWT } from 'jose';
import type { Clock } from '../../clock.ts';
import { retryAfterMs } from '../retry-after.ts';
import { shortText } from './common.ts';

const SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Renew this long before the access token expires, so no request leaves with a dying token. */
const EXPIRY_MARGIN_MS = 5 * 60_000;

/** The fields of a Google service-account JSON key that the OAuth exchange needs. */
export interface ServiceAccount {
  projectId: string;
  clientEmail: string;
  tokenUri: string;
  privateKeyId: string | undefined;
  key: CryptoKey;
}

/** Getting an access token failed; `kind` says whether to pause the provider or retry later. */
export class FcmAuthError extends Error {
  override name = 'FcmAuthError';
  constructor(
    readonly kind: 'config' | 'transient',
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** OAuth 2.0 access tokens for FCM from a service account (RFC 7523 JWT bearer grant), cached until shortly before expiry. */
export interface FcmTokenSource {
  account(): Promise<ServiceAccount>;
  get(signal: AbortSignal): Promise<string>;
  /** Forgets `token` after FCM refused it (401), so the next get exchanges again. */
  invalidate(token: string): void;
}

export function createFcmTokenSource(options: { serviceAccountFile: string; clock: Clock }): FcmTokenSource {
  const { clock } = options;
  let account: ServiceAccount | undefined;
  let cached: { token: string; expiresAt: number } | undefined;
  let pending: Promise<string> | undefined;

  async function loadAccount(): Promise<ServiceAccount> {
    if (account) return account;
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(await readFile(options.serviceAccountFile, 'utf8'));
    } catch (error) {
      const why = (error as NodeJS.ErrnoException).code ?? 'not JSON';
      throw new FcmAuthError('config', `FCM_SERVICE_ACCOUNT_FILE cannot be read (${why})`);
    }
    const field = (name: string) => {
      const value = json[name];
      if (typeof value !== 'string' || !value) {
        throw new FcmAuthError('config', `FCM service account has no ${name}`);
      }
      return value;
    };
    let key: CryptoKey;
    try {
      key = await importPKCS8(field('private_key'), 'RS256');
    } catch (error) {
      if (error instanceof FcmAuthError) throw error;
      // Never echo the import error: it may quote the key.
      throw new FcmAuthError('config', 'FCM service account private_key is not a PKCS#8 RSA key');
    }
    account = {
      projectId: field('project_id'),
      clientEmail: field('client_email'),
      tokenUri: field('token_uri'),
      privateKeyId: typeof json.private_key_id === 'string' ? json.private_key_id : undefined,
      key,
    };
    return account;
  }

  async function exchange(signal: AbortSignal): Promise<string> {
    const sa = await loadAccount();
    const issuedAt = Math.floor(clock.now() / 1000);
    const assertion = await new SignJWT({ scope: SCOPE })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(sa.privateKeyId ? { kid: sa.privateKeyId } : {}) })
      .setIssuer(sa.clientEmail)
      .setSubject(sa.clientEmail)
      .setAudience(sa.tokenUri)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + 3600)
      .sign(sa.key);
    let response: Response;
    try {
      response = await fetch(sa.tokenUri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: GRANT_TYPE, assertion }),
        signal,
      });
    } catch {
      throw new FcmAuthError('transient', 'FCM token endpoint unreachable');
    }
    const text = await response.text().catch(() => '');
    if (response.ok) {
      let body: { access_token?: string; expires_in?: number } = {};
      try {
        body = JSON.parse(text);
      } catch {
        // Handled below as a missing token.
      }
      if (!body.access_token)
        throw new FcmAuthError('transient', 'FCM token endpoint answered no access_token');
      const lifetimeMs = (body.expires_in ?? 3600) * 1000;
      cached = {
        token: body.access_token,
        expiresAt: clock.now() + lifetimeMs - Math.min(EXPIRY_MARGIN_MS, lifetimeMs / 2),
      };
      return body.access_token;
    }
    const detail = `FCM token endpoint answered ${response.status}: ${shortText(text)}`;
    if (response.status === 429 || response.status >= 500) {
      throw new FcmAuthError(
        'transient',
        detail,
        retryAfterMs(response.headers.get('retry-after'), clock.now()),
      );
    }
    // invalid_grant, invalid_client, unauthorized_client: the service account itself is refused.
    throw new FcmAuthError('config', detail);
  }

  return {
    account: loadAccount,
    get(signal) {
      if (cached && clock.now() < cached.expiresAt) return Promise.resolve(cached.token);
      // Concurrent sends share one exchange instead of each signing and posting their own.
      pending ??= exchange(signal).finally(() => {
        pending = undefined;
      });
      return pending;
    },
    invalidate(token) {
      if (cached?.token === token) cached = undefined;
    },
  };
}
