import { createClient, rotateClientSecret } from '../auth/accounts.ts';
import { createClientSecrets } from '../auth/client-secrets.ts';
import { DEFAULT_TENANT, GRANTABLE_SCOPES, TENANT_NAME } from '../auth/principal.ts';
import { parseOptions, row, runCli, UsageError } from './support.ts';

export const CLIENTS_HELP = `Usage:
  herald clients add --name N --scopes "s1 s2" [--tenant T]
  herald clients list [--tenant T]
  herald clients rotate --id ID     (prints a new secret; the old one is refused from then on)
  herald clients disable --id ID    (no more tokens for it)
Scopes: ${GRANTABLE_SCOPES.join(', ')}

Examples:
  herald clients add --name billing --scopes "notifications:send notifications:read"
  herald clients rotate --id 0193…   (then give the service its new secret)`;

/** `herald clients add|list|rotate|disable`: service clients for the client-credentials grant. */
export function runClients(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return runCli(env, CLIENTS_HELP, async ({ config, store, clock, out }) => {
    const [action, ...rest] = args;
    const { values } = parseOptions(rest, OPTIONS);
    const secrets = createClientSecrets(store.auth, clock, config.keyEncryptionSecret);
    if (action === 'add') {
      const name = values.name?.trim();
      const scopes = (values.scopes ?? '').split(/[\s,]+/).filter(Boolean);
      const tenant = values.tenant ?? DEFAULT_TENANT;
      if (!name) throw new UsageError('--name is required');
      if (scopes.length === 0) throw new UsageError('--scopes is required');
      const unknown = scopes.filter((scope) => !(GRANTABLE_SCOPES as readonly string[]).includes(scope));
      if (unknown.length > 0) throw new UsageError(`unknown scope ${unknown.join(', ')}`);
      if (!TENANT_NAME.test(tenant))
        throw new UsageError('--tenant must be lowercase letters, digits, . _ -');
      const { client, secret } = await createClient(store.auth, clock, secrets, { name, scopes, tenant });
      out(`client_id: ${client.id}`);
      out(`client_secret: ${secret}`);
      out('The secret is shown only now; Herald keeps only a keyed digest of it.');
      return 0;
    }
    if (action === 'rotate' || action === 'disable') {
      const id = values.id;
      if (!id) throw new UsageError('--id is required');
      if (!(await store.auth.findClient(id))) {
        console.error(`No client ${id}.`);
        return 1;
      }
      if (action === 'disable') {
        await store.auth.setClientDisabled(id, true);
        out(`Client ${id} disabled: it gets no more tokens.`);
        return 0;
      }
      out(`client_id: ${id}`);
      out(`client_secret: ${await rotateClientSecret(store.auth, secrets, id)}`);
      out('The secret is shown only now; the old one is refused from now on.');
      return 0;
    }
    if (action === 'list') {
      const widths = [28, 24, 16];
      out(row(['CLIENT_ID', 'NAME', 'TENANT', 'SCOPES'], widths));
      for (const c of await store.auth.listClients(values.tenant)) {
        out(row([c.id, c.name, c.tenant, c.scopes.join(' ')], widths));
      }
      return 0;
    }
    throw new UsageError(action ? `unknown action "${action}"` : 'missing action');
  });
}

const OPTIONS = {
  id: { type: 'string' },
  name: { type: 'string' },
  scopes: { type: 'string' },
  tenant: { type: 'string' },
} as const;
