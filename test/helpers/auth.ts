import { createUser as createUserRecord } from '../../src/auth/accounts.ts';
import { DEFAULT_TENANT, ROLE_SCOPES, type UserRole } from '../../src/auth/principal.ts';
import type { App } from '../../src/http/types.ts';
import type { HeraldDeps } from '../../src/main.ts';
import type { UserRecord } from '../../src/store/port/auth.ts';

/** Options of `tokenFor`: who the token is for. Defaults: tenant `default`, every scope. */
export interface TokenOptions {
  tenant?: string;
  scopes?: readonly string[];
  sub?: string;
  role?: UserRole;
  /** Lifetime in seconds (default: config.auth.accessTtl). */
  ttl?: number;
}

/**
 * Mints a real access token with the real signing keys of `deps.store` (making the first key if
 * there is none), so the app built from the same deps accepts it.
 */
export async function tokenFor(deps: HeraldDeps, options: TokenOptions = {}): Promise<string> {
  const service = deps.auth;
  await service.keyring.ensureActive();
  const role = options.role ?? (options.scopes ? undefined : 'admin');
  const issued = await service.tokens.issueAccess(
    {
      sub: options.sub ?? 'usr_test',
      tenant: options.tenant ?? DEFAULT_TENANT,
      scopes: options.scopes ?? (role ? ROLE_SCOPES[role] : []),
      role,
    },
    options.ttl,
  );
  return issued.token;
}

/** `{ authorization: 'Bearer …' }` for inject calls. */
export async function authHeader(
  deps: HeraldDeps,
  options: TokenOptions = {},
): Promise<{ authorization: string }> {
  return { authorization: `Bearer ${await tokenFor(deps, options)}` };
}

/** Creates a user directly in the store (argon2 hashing included). */
export function createUser(
  deps: HeraldDeps,
  input: { email: string; password?: string; role?: UserRole; tenant?: string },
): Promise<UserRecord> {
  return createUserRecord(deps.store.auth, deps.clock, {
    email: input.email,
    password: input.password ?? 'correct horse battery staple',
    role: input.role ?? 'admin',
    tenant: input.tenant ?? DEFAULT_TENANT,
  });
}

/** Logs in through POST /auth/login and returns the token pair (throws on a non-200). */
export async function loginAs(
  app: App,
  email: string,
  password = 'correct horse battery staple',
): Promise<{ access_token: string; refresh_token: string }> {
  const response = await app.inject({ method: 'POST', url: '/auth/login', payload: { email, password } });
  if (response.statusCode !== 200) throw new Error(`login failed: ${response.statusCode} ${response.body}`);
  return response.json();
}

/** A full API app (every role's routes) on a fresh SQLite store with a manual clock, for inject tests. */
export async function authTestApp(env: Record<string, string> = {}) {
  const { manualClock } = await import('../../src/clock.ts');
  const { buildApi, createDeps } = await import('../../src/main.ts');
  const { testConfig } = await import('./config.ts');
  const clock = manualClock(Date.UTC(2026, 0, 1));
  const deps = await createDeps(testConfig({ HERALD_ROLES: 'auth,api', ...env }), clock);
  const app = await buildApi(deps);
  return {
    app,
    deps,
    clock,
    async close() {
      await app.close();
      await deps.store.close();
    },
  };
}
