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
  /**
   * The longest lifetime (`exp` − `iat`, seconds) a token of this kind may claim: its configured
   * TTL (HERALD_ACCESS_TTL, HERALD_REFRESH_TTL). A token signed with a real key but with `exp`
   * years ahead (a bug, a misused key, a forged issuer) is refused rather than trusted for years
   * (RFC 8725 section 3.10's advice to bound what a token may claim).
   */
  maxLifetimeS: number;
}

/** The refused-token error every failure maps to: one code, one body, whatever failed. */
export function invalidToken(detail = 'The token is invalid or expired.'): HeraldError {
  return new HeraldError('AUTH_INVALID_TOKEN', detail);
}

/**
 * Verifies signature and claims with algorithms pinned to the asymmetric ones Herald signs with
 * (never `none` or HS*), `typ`, `iss`, `aud`, required `exp`/`iat`/`jti`/`sub`, the 30 s
 * tolerance, and a lifetime (`exp` − `iat`) of at most `maxLifetimeS` plus that tolerance. jose
 * never follows `jku`/`x5u`/`jwk` headers and refuses unknown `crit`. Any failure becomes
 * AUTH_INVALID_TOKEN; the jose message is not echoed.
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
  // Herald writes exactly its TTL; the tolerance leaves room for an issuer that reads its clock
  // once for `iat` and again for `exp`. `exp` is a number here (required, and checked by jose).
  if ((payload.exp as number) - payload.iat > check.maxLifetimeS + CLOCK_TOLERANCE_S) throw invalidToken();
  return { payload, kid: protectedHeader.kid };
}
