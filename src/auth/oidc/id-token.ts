import { jwtVerify } from 'jose';
import { HeraldError } from '../../errors.ts';
import { safeEqual } from '../../safe-equal.ts';
import type { ProviderMetadata } from './provider.ts';

/** The identity an ID token asserts, once verified: who at which issuer, and a verified email if it says one. */
export interface Identity {
  iss: string;
  sub: string;
  /** The email, when the ID token asserts it verified; otherwise read at the userinfo endpoint. */
  email?: string;
}

function refused(detail: string): HeraldError {
  return new HeraldError('AUTH_INVALID_CREDENTIALS', detail);
}

/**
 * Verifies an ID token (OpenID Connect Core section 3.1.3.7): signature by the provider's keys
 * with a pinned algorithm, `iss`, `aud` (and `azp` when there are several audiences), `exp` and
 * `iat` with 30 s tolerance, and the `nonce` the browser created for this sign-in. The identity
 * is (`iss`, `sub`); an email counts only when the provider says it is verified.
 */
export async function verifyIdToken(
  idToken: string,
  provider: ProviderMetadata,
  expected: { clientId: string; nonce: string; nowS: number },
): Promise<Identity> {
  if (provider.algorithms.length === 0)
    throw refused('The identity provider signs with no accepted algorithm.');
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(idToken, provider.jwks, {
      issuer: provider.issuer,
      audience: expected.clientId,
      algorithms: provider.algorithms,
      clockTolerance: 30,
      currentDate: new Date(expected.nowS * 1000),
      requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
    }));
  } catch {
    throw refused('The ID token is invalid.');
  }
  const aud = payload.aud;
  if (Array.isArray(aud) && aud.length > 1 && payload.azp !== expected.clientId) {
    throw refused('The ID token was issued to another client.');
  }
  if (typeof payload.nonce !== 'string' || !safeEqual(payload.nonce, expected.nonce)) {
    throw refused('The ID token does not carry this sign-in nonce.');
  }
  const identity: Identity = { iss: provider.issuer, sub: String(payload.sub) };
  if (typeof payload.email === 'string' && payload.email_verified === true) identity.email = payload.email;
  return identity;
}

/**
 * The verified email of `identity` from the provider's userinfo endpoint (OpenID Connect Core
 * section 5.3), for providers that leave it out of the ID token. The answer's `sub` must be the
 * ID token's, or it is about someone else and is ignored (section 5.3.2).
 */
export async function userinfoEmail(
  endpoint: string | undefined,
  accessToken: string | undefined,
  identity: Identity,
): Promise<string | undefined> {
  if (!endpoint || !accessToken) return undefined;
  let claims: Record<string, unknown>;
  try {
    const response = await fetch(endpoint, {
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok) return undefined;
    claims = (await response.json()) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (claims.sub !== identity.sub) return undefined;
  return typeof claims.email === 'string' && claims.email_verified === true ? claims.email : undefined;
}
