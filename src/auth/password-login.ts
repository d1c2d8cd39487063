import { HeraldError } from '../errors.ts';
import type { AuthStore, UserRecord } from '../store/port/auth.ts';
import type { GateTurn } from './argon2-gate.ts';
import { verifySecret } from './passwords.ts';

/**
 * How many users of one email a login naming no tenant checks, oldest first, and how many argon2
 * verifications every such login costs: fewer candidates are made up with verifications of the
 * dummy hash, so the time of the answer cannot tell how many tenants have a user of the email
 * (no answer tells one tenant about another's users: docs/authentication.md). Two covers an address
 * that is a user of an operator's tenant and of one customer's at the price of one more hash per
 * login; a user past them signs in naming its tenant (README, "Security").
 */
export const LOGIN_CANDIDATES = 2;

/**
 * The user a password login signs in (docs/authentication.md): with `tenant`, that tenant's user of the
 * email; without, the one user of that email, in any tenant, whose password matches. Every
 * candidate's hash is verified, disabled users' too, and the count is made up with the dummy
 * hash (one verification with a tenant, LOGIN_CANDIDATES without), so the cost depends on the
 * request alone: not on which password was wrong, whether a user is disabled, or how many
 * tenants share the email. Undefined: the same 401 for all of those. Two or more matching users:
 * `400` asking for `tenant` (only a caller holding both passwords can get it).
 */
export async function passwordUser(
  store: AuthStore,
  login: { email: string; password: string; tenant?: string | undefined; turn: GateTurn },
): Promise<UserRecord | undefined> {
  const candidates =
    login.tenant === undefined
      ? await store.findUsersByEmail(login.email, LOGIN_CANDIDATES)
      : [await store.findUserByEmail(login.email, login.tenant)].filter((u) => u !== undefined);
  const cost = login.tenant === undefined ? LOGIN_CANDIDATES : 1;
  const hashes = [
    ...candidates.map((u) => u.passwordHash),
    ...Array.from({ length: cost - candidates.length }, () => undefined),
  ];
  // Side by side: with threads free in the argon2 gate, they take about one hash's time.
  const results = await Promise.allSettled(
    hashes.map((hash) => verifySecret(hash, login.password, login.turn)),
  );
  const refused = results.find((r) => r.status === 'rejected');
  if (refused) throw refused.reason;
  const matching = candidates.filter((u, i) => {
    const result = results[i];
    return result?.status === 'fulfilled' && result.value && !u.disabled;
  });
  if (matching.length > 1) {
    throw new HeraldError('VALIDATION_FAILED', 'This email and password sign in to several tenants.', {
      errors: [
        {
          path: 'body/tenant',
          message: 'must name the tenant to sign in to: this email and password sign in to several',
        },
      ],
    });
  }
  return matching[0];
}
