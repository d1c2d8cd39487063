import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import type { CoreDeps } from '../deps.ts';
import type { Store } from '../store/port/index.ts';
import { type ClientSecrets, createClientSecrets } from './client-secrets.ts';
import { createKeyring, type Keyring } from './keys.ts';
import type { AccessTokenVerifier } from './principal.ts';
import { createAuthThrottles, type Throttle } from './throttle.ts';
import { createTokenService, type TokenService } from './tokens.ts';
import { type CachingVerifier, createLocalVerifier, createRemoteVerifier } from './verifier.ts';

/** The auth parts one process shares: keys, token issuing, the local verifier, the throttles. */
export interface AuthService {
  keyring: Keyring;
  tokens: TokenService;
  verifier: CachingVerifier;
  throttles: Record<'login' | 'token' | 'oidc', Throttle>;
  clientSecrets: ClientSecrets;
}

/** The keyring of the configured store and secret: the one way the service and the CLI build it. */
export function configuredKeyring(config: Config, store: Store, clock: Clock): Keyring {
  return createKeyring({
    store: store.auth,
    clock,
    alg: config.auth.alg,
    secret: config.keyEncryptionSecret,
    maxTokenTtl: Math.max(config.auth.accessTtl, config.auth.refreshTtl, config.auth.inboxTokenTtl),
    reloadMs: config.auth.keyReloadMs,
  });
}

/** What the auth role's routes are built from. */
export type AuthDeps = CoreDeps & { auth: AuthService };

/** Builds the keyring, token service and local verifier over the store's keys (no I/O yet). */
export function createAuthService(config: Config, store: Store, clock: Clock): AuthService {
  const keyring = configuredKeyring(config, store, clock);
  const verifier = createLocalVerifier({
    keyring,
    issuer: config.auth.issuer,
    audience: config.auth.audience,
    clock,
    maxLifetimeS: config.auth.accessTtl,
    recipientMaxLifetimeS: config.auth.inboxTokenTtl,
    cacheSize: config.auth.verifyCacheSize,
  });
  return {
    keyring,
    tokens: createTokenService(config, keyring, clock),
    verifier,
    throttles: createAuthThrottles(store.auth, clock, config.auth),
    clientSecrets: createClientSecrets(store.auth, clock, config.keyEncryptionSecret),
  };
}

/**
 * The verifier of a process: the local keys of `auth` when it runs the `auth` role or has no
 * HERALD_JWKS_URL; the remote key set for an `api` process without `auth` that names one.
 * With the `auth` role, makes the first signing key when the store has none.
 */
export async function startVerifier(
  config: Config,
  auth: AuthService,
  clock: Clock,
): Promise<AccessTokenVerifier> {
  if (config.auth.jwksUrl && !config.roles.includes('auth')) {
    return createRemoteVerifier({
      jwksUrl: config.auth.jwksUrl,
      cooldownMs: config.auth.jwksCooldownMs,
      maxAgeMs: config.auth.jwksMaxAgeMs,
      issuer: config.auth.issuer,
      audience: config.auth.audience,
      clock,
      maxLifetimeS: config.auth.accessTtl,
      recipientMaxLifetimeS: config.auth.inboxTokenTtl,
      cacheSize: config.auth.verifyCacheSize,
    });
  }
  if (config.roles.includes('auth')) {
    await auth.keyring.ensureActive();
    // Keys stored in plaintext before a secret was set are sealed now (README, "Keys at rest").
    await auth.keyring.sealAtRest();
    await auth.clientSecrets.sealAtRest();
    // Opens the private key now: a wrong HERALD_KEY_ENCRYPTION_SECRET fails start-up, not the first login.
    await auth.keyring.signingKey();
  } else await auth.keyring.refreshIfStale();
  return auth.verifier;
}
