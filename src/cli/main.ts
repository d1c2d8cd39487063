import { CLIENTS_HELP, runClients } from './clients.ts';
import { KEYS_HELP, runKeys } from './keys.ts';
import { OPENAPI_HELP, runOpenapi } from './openapi.ts';
import { QUEUES_HELP, runQueues } from './queues.ts';
import { runStart, START_HELP } from './start.ts';
import { runUsers, USERS_HELP } from './users.ts';

/** A CLI command: gets its arguments (after the command name) and the environment. */
export type Command = (args: string[], env: NodeJS.ProcessEnv) => Promise<number>;

const USAGE = `Usage: herald <command> [--help]

  start                                   run the roles in HERALD_ROLES (default: all)
  users add --email E (--password P | --password-stdin) --role R [--tenant T]
  users list [--tenant T]
  users disable --email E | --id ID
  clients add --name N --scopes "s1 s2" [--tenant T]
  clients list [--tenant T]
  keys rotate | list | remove --kid=K
  queues pause|resume [--priority P] [--channel C]
  openapi                                 print the OpenAPI document (JSON)

Examples:
  HERALD_ADMIN_EMAIL=you@example.com HERALD_ADMIN_PASSWORD='a long passphrase' herald start
  herald users add --email you@example.com --password-stdin --role admin
  herald start --help

Configuration comes from the environment (see docs/configuration.md).`;

const commands: Record<string, { run: Command; help: string }> = {
  start: { run: runStart, help: START_HELP },
  users: { run: runUsers, help: USERS_HELP },
  clients: { run: runClients, help: CLIENTS_HELP },
  keys: { run: runKeys, help: KEYS_HELP },
  queues: { run: runQueues, help: QUEUES_HELP },
  openapi: { run: runOpenapi, help: OPENAPI_HELP },
};

const isHelp = (arg: string | undefined) => arg === '--help' || arg === '-h' || arg === 'help';

/** Entry point of the `herald` binary. */
export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || isHelp(name)) {
    console.log(USAGE);
    return name ? 0 : 1;
  }
  const command = commands[name];
  if (!command) {
    console.error(`Unknown command "${name}".\n\n${USAGE}`);
    return 1;
  }
  if (rest.some(isHelp)) {
    console.log(command.help);
    return 0;
  }
  return command.run(rest, env);
}
