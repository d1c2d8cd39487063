import { type Config, ConfigError, loadConfig } from '../config/config.ts';
import { startDispatchThread, stopOnThreadExit, wantsDispatchThread } from '../dispatch/thread.ts';
import { PortUnavailableError } from '../http/listen.ts';
import type { Herald } from '../main.ts';
import { trimMemory } from '../memory-trim.ts';

export const START_HELP = `Usage: herald start

Runs the roles named in HERALD_ROLES (default auth,api,worker,gateway) until SIGTERM or SIGINT,
then stops gracefully. Everything else comes from the environment (docs/configuration.md):
HERALD_DATA_DIR (SQLite, default ./data) or DATABASE_URL (PostgreSQL), ports, providers.

Examples:
  herald start                                              (all roles, SQLite in ./data)
  HERALD_ADMIN_EMAIL=you@example.com HERALD_ADMIN_PASSWORD='a long passphrase' herald start
  DATABASE_URL=postgres://herald@db/herald HERALD_ROLES=worker herald start
  HERALD_LOG_FORMAT=json herald start                       (JSON logs on a terminal too)`;

/** A value as one shell word (quoted when it holds anything but safe characters). */
const shellWord = (value: string) =>
  /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;

/**
 * The variable that points a second command at this process's store: its HERALD_DATA_DIR, made
 * absolute, or its DATABASE_URL without the password (the user adds it back).
 */
function storeVariable(config: Config): string {
  if (!config.databaseUrl) return `HERALD_DATA_DIR=${shellWord(config.dataDir)}`;
  const url = new URL(config.databaseUrl);
  const secret = url.password !== '';
  url.password = '';
  return `DATABASE_URL=${shellWord(secret ? url.href.replace('@', ':<password>@') : url.href)}`;
}

/** What an empty store's first start says: nobody can sign in yet, and how to change that. */
function firstRunHint(config: Config, url: string | undefined): string {
  const store = storeVariable(config);
  return `
No user can sign in yet. Create the first admin in this server's store, then sign in${url ? ` at ${url}` : ''}:
  ${store} npm run herald -- users add --email you@example.com --password-stdin --role admin
  (from an installed package: ${store} npx herald users add …; the password is read from stdin)
or start once with HERALD_ADMIN_EMAIL and HERALD_ADMIN_PASSWORD set.
`;
}

/** `herald start`: runs the configured roles until SIGTERM or SIGINT, then shuts down gracefully. */
export async function runStart(_args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let config: Config;
  let herald: Herald;
  try {
    config = loadConfig(env);
    // The dispatch thread starts before the rest of Herald is loaded: its modules load on the
    // other core while this thread loads the API's (start-up to /health about 100 ms sooner).
    const early = wantsDispatchThread(config) ? startDispatchThread(config, stopOnThreadExit) : undefined;
    const { startHerald } = await import('../main.ts');
    herald = await startHerald(config, undefined, early);
  } catch (error) {
    // Configuration problems (also those found at start, like a wrong key secret) get one readable line.
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 2;
    }
    // A taken port: one line naming it and its variable; startHerald has closed what it opened.
    if (error instanceof PortUnavailableError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  }
  const where = [herald.apiUrl && `API ${herald.apiUrl}`, herald.gatewayUrl && `UI ${herald.gatewayUrl}`];
  if (config.roles.includes('auth') && !(await herald.store.auth.hasUsers())) {
    console.log(firstRunHint(config, herald.gatewayUrl ?? herald.apiUrl));
  }
  console.log(`Herald running (${config.roles.join(',')}) ${where.filter(Boolean).join(', ')}`);
  // The C memory start-up freed goes back to the system (src/memory-trim.ts).
  trimMemory();
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await herald.close();
  return 0;
}
