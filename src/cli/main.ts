/** A CLI command: gets its arguments (after the command name) and the environment. */
export type Command = (args: string[], env: NodeJS.ProcessEnv) => Promise<number>;

const USAGE = `Usage: herald <command> [--help]   |   herald --version

  start                                   run the roles in HERALD_ROLES (default: all)
  users add --email E (--password P | --password-stdin) --role R [--tenant T]
  users list [--tenant T]
  users disable --email E | --id ID
  clients add --name N --scopes "s1 s2" [--tenant T]
  clients list [--tenant T]
  clients rotate | disable --id ID        a new secret (the old one is refused) | no more tokens
  keys rotate | list | remove --kid=K     signing keys
  keys rotate-unsubscribe                 a new key for unsubscribe links (older links keep working)
  queues [list]                           the queues, their depth and pauses
  queues pause | resume [--priority P] [--channel C]
  quotas set --tenant T [--channel C] [--rate N [--burst N]] [--per-day N]
  quotas get | clear --tenant T [--channel C]   a tenant's limits and today's usage | none
  recipients import FILE [--tenant T]     recipients from CSV or JSON lines, in batches
  recipients export [--tenant T]          every recipient as JSON lines
  openapi                                 print the OpenAPI document (JSON)

Examples:
  HERALD_ADMIN_EMAIL=you@example.com HERALD_ADMIN_PASSWORD='a long passphrase' herald start
  herald users add --email you@example.com --password-stdin --role admin
  herald start --help

Configuration comes from the environment (see docs/configuration.md).`;

/**
 * Each command's module is loaded only when it runs: `herald start` starts its dispatch thread
 * before the rest of Herald is loaded, and no command pays for another's modules.
 */
const commands: Record<string, () => Promise<{ run: Command; help: string }>> = {
  start: () => import('./start.ts').then((m) => ({ run: m.runStart, help: m.START_HELP })),
  users: () => import('./users.ts').then((m) => ({ run: m.runUsers, help: m.USERS_HELP })),
  clients: () => import('./clients.ts').then((m) => ({ run: m.runClients, help: m.CLIENTS_HELP })),
  keys: () => import('./keys.ts').then((m) => ({ run: m.runKeys, help: m.KEYS_HELP })),
  queues: () => import('./queues.ts').then((m) => ({ run: m.runQueues, help: m.QUEUES_HELP })),
  quotas: () => import('./quotas.ts').then((m) => ({ run: m.runQuotas, help: m.QUOTAS_HELP })),
  recipients: () =>
    import('./recipients.ts').then((m) => ({ run: m.runRecipients, help: m.RECIPIENTS_HELP })),
  openapi: () => import('./openapi.ts').then((m) => ({ run: m.runOpenapi, help: m.OPENAPI_HELP })),
};

const isHelp = (arg: string | undefined) => arg === '--help' || arg === '-h' || arg === 'help';
const isVersion = (arg: string | undefined) => arg === '--version' || arg === '-v' || arg === 'version';

/** Entry point of the `herald` binary. */
export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || isHelp(name)) {
    console.log(USAGE);
    return name ? 0 : 1;
  }
  if (isVersion(name)) {
    const { VERSION } = await import('../version.ts');
    console.log(`herald ${VERSION}`);
    return 0;
  }
  const load = commands[name];
  if (!load) {
    console.error(`Unknown command "${name}".\n\n${USAGE}`);
    return 1;
  }
  const command = await load();
  if (rest.some(isHelp)) {
    console.log(command.help);
    return 0;
  }
  return command.run(rest, env);
}
