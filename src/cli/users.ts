import { createUser, disableUser, isRole, normalizeEmail, USER_EMAIL } from '../auth/accounts.ts';
import { passwordProblem } from '../auth/password-rules.ts';
import { DEFAULT_TENANT, TENANT_NAME } from '../auth/principal.ts';
import { type AuthStore, DuplicateError, type UserRecord } from '../store/port/auth.ts';
import { readPassword } from './password-input.ts';
import { parseOptions, row, runCli, UsageError } from './support.ts';

export const USERS_HELP = `Usage:
  herald users add --email E (--password P | --password-stdin) --role admin|sender|viewer [--tenant T]
  herald users list [--tenant T]
  herald users disable --email E [--tenant T] | --id ID

--password-stdin asks twice, without echo, at a terminal; from a pipe it reads the first line.

Examples:
  herald users add --email you@example.com --password-stdin --role admin   (the first admin)
  herald users add --email ops@acme.test --password-stdin --role viewer --tenant acme
  herald users list`;

/** `herald users add|list|disable`: manages users directly in the store. */
export function runUsers(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return runCli(env, USERS_HELP, async ({ store, clock, out }) => {
    const [action, ...rest] = args;
    const { values } = parseOptions(rest, OPTIONS);
    if (action === 'add') {
      const { email, role } = values;
      const tenant = values.tenant ?? DEFAULT_TENANT;
      if (!email) throw new UsageError('--email is required');
      if (!USER_EMAIL.test(email) || email.length > 320)
        throw new UsageError('--email must be an email address');
      if (!role || !isRole(role)) throw new UsageError('--role must be admin, sender or viewer');
      if (!TENANT_NAME.test(tenant))
        throw new UsageError('--tenant must be lowercase letters, digits, . _ -');
      const password = values['password-stdin'] ? await readPassword() : values.password;
      const problem = password ? passwordProblem(password) : 'is required';
      if (!password || problem) throw new UsageError(`the password ${problem}`);
      try {
        const user = await createUser(store.auth, clock, { email, password, role, tenant });
        out(`created user ${user.id} ${user.email} role=${user.role} tenant=${user.tenant}`);
        return 0;
      } catch (error) {
        if (error instanceof DuplicateError)
          throw new Error(`tenant ${tenant} has a user with email ${normalizeEmail(email)}`);
        throw error;
      }
    }
    if (action === 'list') {
      const widths = [40, 32, 7, 16];
      out(row(['ID', 'EMAIL', 'ROLE', 'TENANT', 'DISABLED'], widths));
      for (const u of await store.auth.listUsers(values.tenant)) {
        out(row([u.id, u.email, u.role, u.tenant, String(u.disabled)], widths));
      }
      return 0;
    }
    if (action === 'disable') {
      if (!values.id && !values.email) throw new UsageError('give --email or --id');
      const user = values.id
        ? await store.auth.findUserById(values.id)
        : await userOfEmail(store.auth, normalizeEmail(values.email as string), values.tenant);
      if (!user) throw new Error('no such user');
      await disableUser(store.auth, clock, user.id);
      out(`disabled user ${user.id} ${user.email}`);
      return 0;
    }
    throw new UsageError(action ? `unknown action "${action}"` : 'missing action');
  });
}

/**
 * The user of an email: in `tenant` when given; else the only one, since the same email may be a
 * user of several tenants (then --tenant or --id says which).
 */
async function userOfEmail(
  store: AuthStore,
  email: string,
  tenant: string | undefined,
): Promise<UserRecord | undefined> {
  if (tenant !== undefined) return store.findUserByEmail(email, tenant);
  const users = await store.findUsersByEmail(email, 2);
  if (users.length > 1) {
    throw new UsageError(`several tenants have a user with email ${email}: give --tenant or --id`);
  }
  return users[0];
}

const OPTIONS = {
  email: { type: 'string' },
  password: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  role: { type: 'string' },
  tenant: { type: 'string' },
  id: { type: 'string' },
} as const;
