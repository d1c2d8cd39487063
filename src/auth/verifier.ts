import { createRemoteJWKSet, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { Clock } from '../clock.ts';
import { ACCESS_TYP, invalidToken, verifyJwt } from './jwt.ts';
import { CLOCK_TOLERANCE_S, type Keyring } from './keys.ts';
import { type AccessTokenVerifier, INBOX_SCOPE, type Principal, RECIPIENT_SUB_PREFIX } from './principal.ts';
import { VerifyCache } from './verify-cache.ts';

/** Options shared by the local and the remote verifier. */
export interface VerifierOptions {
  issuer: string;
  audience: string;
  clock: Clock;
  /**
   * The longest access-token lifetime accepted (`exp` − `iat`, plus the 30 s tolerance): the
   * configured HERALD_ACCESS_TTL. An `api` process verifying with HERALD_JWKS_URL needs the same
   * value as (or a larger one than) the `auth` service that signs.
   */
  maxLifetimeS: number;
  /**
   * The same bound for recipient tokens (HERALD_INBOX_TOKEN_TTL): theirs alone may live longer
   * than HERALD_ACCESS_TTL, so a user's or client's token claiming the inbox tokens' lifetime is
   * still refused. `maxLifetimeS` when absent.
   */
  recipientMaxLifetimeS?: number;
  /** Bound of the verified-token cache (config.auth.verifyCacheSize); 0 disables it. */
  cacheSize: number;
}

/** A verifier plus its cache, exposed for measurements and tests. */
export interface CachingVerifier extends AccessTokenVerifier {
  readonly cache: VerifyCache;
}

/** Reads the principal from verified access-token claims; refuses claims of the wrong shape. */
function principalFromClaims(payload: JWTPayload, options: VerifierOptions): Principal {
  const { sub, tid, scope, exp, iat, role, client_id: clientId } = payload as Record<string, unknown>;
  if (typeof sub !== 'string' || typeof tid !== 'string' || typeof scope !== 'string') throw invalidToken();
  if (typeof exp !== 'number' || typeof iat !== 'number') throw invalidToken();
  const scopes = new Set(scope.split(' ').filter(Boolean));
  // A recipient's token is `rcp:` with the single scope `inbox`, and `inbox` is never anyone
  // else's: a token that mixes them was not made by Herald's token endpoints.
  const recipient = sub.startsWith(RECIPIENT_SUB_PREFIX);
  if (recipient !== scopes.has(INBOX_SCOPE) || (recipient && scopes.size !== 1)) throw invalidToken();
  const longest = (recipient && options.recipientMaxLifetimeS) || options.maxLifetimeS;
  if (exp - iat > longest + CLOCK_TOLERANCE_S) throw invalidToken();
  const principal: Principal = {
    sub,
    tenant: tid,
    scope,
    scopes,
    kind: recipient ? 'recipient' : typeof clientId === 'string' ? 'client' : 'user',
    exp,
  };
  if (typeof role === 'string') principal.role = role;
  return principal;
}

function cachingVerifier(
  options: VerifierOptions,
  getKey: JWTVerifyGetKey,
  before?: () => Promise<void>,
  keyAlive?: (kid: string) => boolean,
): CachingVerifier {
  const cache = new VerifyCache(options.cacheSize);
  const check = {
    getKey,
    issuer: options.issuer,
    audience: options.audience,
    typ: ACCESS_TYP,
    clock: options.clock,
    // Each kind's own bound is checked with the claims (principalFromClaims).
    maxLifetimeS: Math.max(options.maxLifetimeS, options.recipientMaxLifetimeS ?? 0),
  };
  return {
    cache,
    async verify(token) {
      if (before) await before();
      const now = options.clock.now();
      const hit = cache.maxSize > 0 ? cache.get(token, now, keyAlive) : undefined;
      if (hit) return hit;
      const { payload, kid } = await verifyJwt(token, check);
      const principal = principalFromClaims(payload, options);
      cache.set(token, principal, (principal.exp + CLOCK_TOLERANCE_S) * 1000, kid);
      return principal;
    },
  };
}

/**
 * Verifies with the keys in the store (this process, or another auth instance, signed them).
 * Export point for benchmarks: build it with `cacheSize: 0` and with a positive size to compare.
 */
export function createLocalVerifier(options: VerifierOptions & { keyring: Keyring }): CachingVerifier {
  const { keyring } = options;
  return cachingVerifier(
    options,
    (header) => keyring.resolve(header),
    () => keyring.refreshIfStale(),
    (kid) => keyring.isPublished(kid),
  );
}

/** How long the kids read from a remote key set are used before they are read again. */
const KIDS_READ_MS = 1000;

/**
 * Verifies with a remote key set (HERALD_JWKS_URL), for an `api` process without the `auth`
 * role. The set is fetched again once it is older than HERALD_JWKS_MAX_AGE_MS (30 s by default),
 * in the background, so a removed key is refused within that time and a second, cached
 * verifications included (a cached token counts only while its kid is in the set). jose refetches
 * on an unknown kid at most once per cooldown (HERALD_JWKS_COOLDOWN_MS) and gives up on a slow
 * server after 5 s.
 */
export function createRemoteVerifier(
  options: VerifierOptions & { jwksUrl: string; cooldownMs?: number; maxAgeMs?: number },
): CachingVerifier {
  const jwks = createRemoteJWKSet(new URL(options.jwksUrl), {
    cacheMaxAge: options.maxAgeMs ?? 30_000,
    cooldownDuration: options.cooldownMs ?? 30_000,
    timeoutDuration: 5_000,
  });
  const refreshInBackground = async () => {
    // An unreachable auth service keeps the last set in use; jose retries at the next call.
    if (!jwks.fresh && !jwks.reloading) jwks.reload().catch(() => undefined);
  };
  // jose hands out a copy of the key set (structuredClone) on every jwks() call: a cached
  // token's kid is looked up in the kids read from it at most once a second (in real time, as
  // jose counts the set's age), and read again at once for a kid not among them.
  let kids = new Set<string>();
  let kidsReadAt = Number.NEGATIVE_INFINITY;
  const readKids = () => {
    kids = new Set(jwks.jwks()?.keys.flatMap((key) => (key.kid === undefined ? [] : [key.kid])) ?? []);
    kidsReadAt = Date.now();
  };
  const published = (kid: string) => {
    if (Date.now() - kidsReadAt >= KIDS_READ_MS || !kids.has(kid)) readKids();
    return kids.has(kid);
  };
  return cachingVerifier(options, jwks, refreshInBackground, published);
}
