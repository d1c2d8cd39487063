import { type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose';
import type { Clock } from '../clock.ts';
import { JWT_ALGS } from '../config/config.ts';
import { HeraldError } from '../errors.ts';
import { CLOCK_TOLERANCE_S } from './keys.ts';

/** `typ` of access tokens (RFC 9068). */
export const ACCESS_TYP = 'at+jwt';
/** `typ` of refresh tokens: another type, so neither can stand in for the other. */
export const REFRESH_TYP = 'refresh+jwt';

/** What a JWT check needs: where keys come from and which claims must match. */
export interface JwtCheck {
  getKey: JWTVerifyGetKey;
  issuer: string;
  audience: string;
  typ: string;
  clock: Clock;
}

/** The refused-token error every failure maps to: one code, one body, whatever failed. */
export function invalidToken(detail = 'The token is invalid or expired.'): HeraldError {
  return new HeraldError('AUTH_INVALID_TOKEN', detail);
}

/**
 * Verifies signature and claims with algorithms pinned to the asymmetric ones Herald signs with
 * (never `none` or HS*), `typ`, `iss`, `aud`, required `exp`/`iat`/`jti`/`sub`, and the 30 s
 * tolerance. jose never follows `jku`/`x5u`/`jwk` headers and refuses unknown `crit`. Any
 * failure becomes AUTH_INVALID_TOKEN; the jose message is not echoed.
 */
export async function verifyJwt(
  token: string,
  check: JwtCheck,
): Promise<{ payload: JWTPayload; kid?: string }> {
  const nowS = Math.floor(check.clock.now() / 1000);
  let result: Awaited<ReturnType<typeof jwtVerify>>;
  try {
    result = await jwtVerify(token, check.getKey, {
      algorithms: [...JWT_ALGS],
      issuer: check.issuer,
      audience: check.audience,
      typ: check.typ,
      clockTolerance: CLOCK_TOLERANCE_S,
      currentDate: new Date(nowS * 1000),
      requiredClaims: ['exp', 'iat', 'jti', 'sub'],
      crit: {},
    });
  } catch {
    throw invalidToken();
  }
  const { payload, protectedHeader } = result;
  // jose checks `iat` only with maxTokenAge; a token issued in the future is refused here.
  if (typeof payload.iat !== 'number' || payload.iat > nowS + CLOCK_TOLERANCE_S) throw invalidToken();
  return { payload, kid: protectedHeader.kid };
}
