import {
  createUser,
  disableUser,
  isRole,
  normalizeEmail,
  TENANT_NAME,
  USER_EMAIL,
} from '../auth/accounts.ts';
import { passwordProblem } from '../auth/passwords.ts';
import { DEFAULT_TENANT } from '../auth/principal.ts';
import { DuplicateError } from '../store/port/auth.ts';
import { parseOptions, readStdinLine, row, runCli, UsageError } from './support.ts';

export const USERS_HELP = `Usage:
  herald users add --email E (--password P | --password-stdin) --role admin|sender|viewer [--tenant T]
  herald users list [--tenant T]
  herald users disable --email E | --id ID

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
      const password = values['password-stdin'] ? await readStdinLine() : values.password;
      const problem = password ? passwordProblem(password) : 'is required';
      if (!password || problem) throw new UsageError(`the password ${problem}`);
      try {
        const user = await createUser(store.auth, clock, { email, password, role, tenant });
        out(`created user ${user.id} ${user.email} role=${user.role} tenant=${user.tenant}`);
        return 0;
      } catch (error) {
        if (error instanceof DuplicateError)
          throw new Error(`a user with email ${normalizeEmail(email)} exists`);
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
      const user = values.id
        ? await store.auth.findUserById(values.id)
        : values.email
          ? await store.auth.findUserByEmail(normalizeEmail(values.email))
          : undefined;
      if (!values.id && !values.email) throw new UsageError('give --email or --id');
      if (!user) throw new Error('no such user');
      await disableUser(store.auth, clock, user.id);
      out(`disabled user ${user.id} ${user.email}`);
      return 0;
    }
    throw new UsageError(action ? `unknown action "${action}"` : 'missing action');
  });
}

const OPTIONS = {
  email: { type: 'string' },
  password: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  role: { type: 'string' },
  tenant: { type: 'string' },
  id: { type: 'string' },
} as const;
