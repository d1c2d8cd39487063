import { runClients } from './clients.ts';
import { runKeys } from './keys.ts';
import { runOpenapi } from './openapi.ts';
import { runQueues } from './queues.ts';
import { runStart } from './start.ts';
import { runUsers } from './users.ts';

/** A CLI command: gets its arguments (after the command name) and the environment. */
export type Command = (args: string[], env: NodeJS.ProcessEnv) => Promise<number>;

const USAGE = `Usage: herald <command>

  start                                   run the roles in HERALD_ROLES (default: all)
  users add --email E (--password P | --password-stdin) --role R [--tenant T]
  users list [--tenant T]
  users disable --email E | --id ID
  clients add --name N --scopes "s1 s2" [--tenant T]
  clients list [--tenant T]
  keys rotate | list | remove --kid K
  queues pause|resume [--priority P] [--channel C]
  openapi                                 print the OpenAPI document (JSON)

Configuration comes from the environment (see README.md).`;

const commands: Record<string, Command> = {
  start: runStart,
  users: runUsers,
  clients: runClients,
  keys: runKeys,
  queues: runQueues,
  openapi: runOpenapi,
};

/** Entry point of the `herald` binary. */
export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(USAGE);
    return name ? 0 : 1;
  }
  const command = commands[name];
  if (!command) {
    console.error(`Unknown command "${name}".\n\n${USAGE}`);
    return 1;
  }
  return command(rest, env);
}
