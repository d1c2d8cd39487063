import { HeraldError } from '../errors.ts';
import type { AuthStore, UserRecord } from '../store/port/auth.ts';
import { verifySecret } from './passwords.ts';

/**
 * Most users of one email that a login naming no tenant checks, oldest first. Each costs one
 * argon2 verification, so a login's cost stays bounded however many tenants share an email; a
 * user past them signs in naming its tenant (README, "Security").
 */
export const LOGIN_CANDIDATES = 4;

/**
 * The user a password login signs in (API.md section 2): with `tenant`, that tenant's user of the
 * email; without, the one user of that email, in any tenant, whose password matches. Every
 * candidate's hash is verified, disabled users' too, and an email with no candidate is verified
 * against the dummy hash, so the answer's cost does not depend on which password was wrong or
 * whether a user is disabled. Undefined: the same 401 for all of those. Two or more matching
 * users: `400` asking for `tenant` (only a caller holding both passwords can get it).
 */
export async function passwordUser(
  store: AuthStore,
  login: { email: string; password: string; tenant?: string | undefined },
): Promise<UserRecord | undefined> {
  const candidates =
    login.tenant === undefined
      ? await store.findUsersByEmail(login.email, LOGIN_CANDIDATES)
      : [await store.findUserByEmail(login.email, login.tenant)].filter((u) => u !== undefined);
  if (candidates.length === 0) {
    await verifySecret(undefined, login.password);
    return undefined;
  }
  // Side by side: with threads free in the argon2 gate, N candidates take about one hash's time.
  const results = await Promise.allSettled(
    candidates.map((u) => verifySecret(u.passwordHash, login.password)),
  );
  const refused = results.find((r) => r.status === 'rejected');
  if (refused) throw refused.reason;
  const matching = candidates.filter((u, i) => {
    const result = results[i];
    return result?.status === 'fulfilled' && result.value && !u.disabled;
  });
  if (matching.length > 1) {
    throw new HeraldError('VALIDATION_FAILED', 'This email and password sign in to several tenants.', {
      errors: [{ path: 'body/tenant', message: 'name the tenant to sign in to' }],
    });
  }
  return matching[0];
}
