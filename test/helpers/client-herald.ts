import { type Herald, startHerald } from '../../src/main.ts';
import { testConfig } from './config.ts';

/** The admin user of `startClientHerald`, for the typed client's tests. */
export const CLIENT_ADMIN = { email: 'client-admin@example.com', password: 'correct horse battery staple' };

/**
 * An in-process Herald on a real port with the roles a client talks to (auth, api, worker) and
 * the CLIENT_ADMIN user; `env` adds or overrides variables.
 */
export async function startClientHerald(env: Record<string, string> = {}): Promise<Herald> {
  return startHerald(
    testConfig({
      HERALD_ROLES: 'auth,api,worker',
      HERALD_ADMIN_EMAIL: CLIENT_ADMIN.email,
      HERALD_ADMIN_PASSWORD: CLIENT_ADMIN.password,
      ...env,
    }),
  );
}
