import { jwtVerify } from 'jose';
import { HeraldError } from '../../errors.ts';
import { safeEqual } from '../../safe-equal.ts';
import type { ProviderMetadata } from './provider.ts';

/** The identity an ID token asserts, once verified. */
export interface Identity {
  sub: string;
  email: string;
}

function refused(detail: string): HeraldError {
  return new HeraldError('AUTH_INVALID_CREDENTIALS', detail);
}

/**
 * Verifies an ID token (OpenID Connect Core section 3.1.3.7): signature by the provider's keys
 * with a pinned algorithm, `iss`, `aud` (and `azp` when there are several audiences), `exp` and
 * `iat` with 30 s tolerance, and the `nonce` the browser created for this sign-in. The identity
 * is its email, which must be verified by the provider.
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
  if (typeof payload.email !== 'string' || payload.email_verified !== true) {
    throw refused('The identity provider did not assert a verified email.');
  }
  return { sub: String(payload.sub), email: payload.email };
}
