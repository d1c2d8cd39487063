import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import { ACCESS_TYP, invalidToken, REFRESH_TYP, verifyJwt } from './jwt.ts';
import type { Keyring } from './keys.ts';

/** Who an access token is issued to. */
export interface AccessSubject {
  sub: string;
  tenant: string;
  scopes: readonly string[];
  /** Users carry their role; clients their client id (RFC 9068 `client_id`). */
  role?: string;
  clientId?: string;
}

/** A signed token with its lifetime in seconds. */
export interface IssuedToken {
  token: string;
  expiresIn: number;
}

/** The verified content of a refresh token. */
export interface RefreshClaims {
  sub: string;
  tenant: string;
  /**
   * When the user signed in (epoch ms): the absolute cap counts from here, and signing out
   * everywhere ends the chains that began before the user's sessionsValidAfter. Carried as
   * `auth_time` (seconds, RFC 9068) and, to the millisecond, as `login_ms`.
   */
  loginMs: number;
}

/** Issues access and refresh tokens with the keyring's active key, and checks refresh tokens. */
export interface TokenService {
  issueAccess(subject: AccessSubject, ttl?: number): Promise<IssuedToken>;
  /** A refresh token whose sliding lifetime never passes `loginMs + refreshMaxAge`; undefined when the cap is reached. */
  issueRefresh(claims: RefreshClaims): Promise<IssuedToken | undefined>;
  verifyRefresh(token: string): Promise<RefreshClaims>;
}

/** Refresh tokens have their own audience, so no API accepts one even if `typ` were ignored. */
function refreshAudience(config: Config): string {
  return `${config.auth.issuer}/auth/refresh`;
}

export function createTokenService(config: Config, keyring: Keyring, clock: Clock): TokenService {
  const { issuer, audience } = config.auth;
  const nowS = () => Math.floor(clock.now() / 1000);

  async function sign(payload: Record<string, unknown>, typ: string, aud: string, sub: string, ttl: number) {
    const { kid, alg, key } = await keyring.signingKey();
    const iat = nowS();
    return new SignJWT(payload)
      .setProtectedHeader({ alg, kid, typ })
      .setIssuer(issuer)
      .setAudience(aud)
      .setSubject(sub)
      .setIssuedAt(iat)
      .setExpirationTime(iat + ttl)
      .setJti(randomUUID())
      .sign(key);
  }

  return {
    async issueAccess(subject, ttl = config.auth.accessTtl) {
      const claims: Record<string, unknown> = { scope: subject.scopes.join(' '), tid: subject.tenant };
      if (subject.role) claims.role = subject.role;
      if (subject.clientId) claims.client_id = subject.clientId;
      return { token: await sign(claims, ACCESS_TYP, audience, subject.sub, ttl), expiresIn: ttl };
    },
    async issueRefresh({ sub, tenant, loginMs }) {
      const authTime = Math.floor(loginMs / 1000);
      const left = authTime + config.auth.refreshMaxAge - nowS();
      const ttl = Math.min(config.auth.refreshTtl, left);
      if (ttl <= 0) return undefined;
      const token = await sign(
        { tid: tenant, auth_time: authTime, login_ms: loginMs },
        REFRESH_TYP,
        refreshAudience(config),
        sub,
        ttl,
      );
      return { token, expiresIn: ttl };
    },
    async verifyRefresh(token) {
      const { payload } = await verifyJwt(token, {
        getKey: (header) => keyring.resolve(header),
        issuer,
        audience: refreshAudience(config),
        typ: REFRESH_TYP,
        clock,
        maxLifetimeS: config.auth.refreshTtl,
      });
      const { sub, tid, auth_time: authTime, login_ms: loginMs } = payload as Record<string, unknown>;
      if (typeof sub !== 'string' || typeof tid !== 'string' || typeof authTime !== 'number')
        throw invalidToken();
      // The absolute cap: no refresh past refreshMaxAge after the password login.
      if (authTime + config.auth.refreshMaxAge <= nowS()) throw invalidToken();
      // Tokens from before login_ms existed count from the start of their second.
      return { sub, tenant: tid, loginMs: typeof loginMs === 'number' ? loginMs : authTime * 1000 };
    },
  };
}
