import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import type { AppDeps } from '../http/types.ts';
import type { Store } from '../store/port/index.ts';
import { createKeyring, type Keyring } from './keys.ts';
import type { AccessTokenVerifier } from './principal.ts';
import { createTokenService, type TokenService } from './tokens.ts';
import { type CachingVerifier, createLocalVerifier, createRemoteVerifier } from './verifier.ts';

/** The auth parts one process shares: keys, token issuing, and the access-token verifier. */
export interface AuthService {
  keyring: Keyring;
  tokens: TokenService;
  verifier: CachingVerifier;
}

const services = new WeakMap<object, AuthService>();

/** Builds the keyring, token service and local verifier over the store's keys (no I/O yet). */
export function createAuthService(config: Config, store: Store, clock: Clock): AuthService {
  const keyring = createKeyring({
    store: store.auth,
    clock,
    alg: config.auth.alg,
    secret: config.keyEncryptionSecret,
    maxTokenTtl: Math.max(config.auth.accessTtl, config.auth.refreshTtl),
    reloadMs: config.auth.keyReloadMs,
  });
  const verifier = createLocalVerifier({
    keyring,
    issuer: config.auth.issuer,
    audience: config.auth.audience,
    clock,
    cacheSize: config.auth.verifyCacheSize,
  });
  const service = { keyring, tokens: createTokenService(config, keyring, clock), verifier };
  services.set(verifier, service);
  return service;
}

/**
 * The verifier for a process: local keys from the store when it runs the `auth` role or has no
 * HERALD_JWKS_URL; the remote key set for an `api` process without `auth` that names one.
 * With the `auth` role, makes the first signing key when the store has none.
 */
export async function createVerifier(
  config: Config,
  store: Store,
  clock: Clock,
): Promise<AccessTokenVerifier> {
  const remote = config.auth.jwksUrl && !config.roles.includes('auth');
  if (remote) {
    return createRemoteVerifier({
      jwksUrl: config.auth.jwksUrl as string,
      cooldownMs: config.auth.jwksCooldownMs,
      issuer: config.auth.issuer,
      audience: config.auth.audience,
      clock,
      cacheSize: config.auth.verifyCacheSize,
    });
  }
  const service = createAuthService(config, store, clock);
  if (config.roles.includes('auth')) {
    await service.keyring.ensureActive();
    // Opens the private key now: a wrong HERALD_KEY_ENCRYPTION_SECRET fails start-up, not the first login.
    await service.keyring.signingKey();
  } else await service.keyring.refreshIfStale();
  return service.verifier;
}

/**
 * The auth service behind `deps.verifier` when createVerifier built it; otherwise (a test's
 * own verifier) one built from `deps`, once per deps.
 */
export function authServiceOf(deps: AppDeps): AuthService {
  const known = services.get(deps.verifier) ?? services.get(deps);
  if (known) return known;
  const service = createAuthService(deps.config, deps.store, deps.clock);
  services.set(deps, service);
  return service;
}
