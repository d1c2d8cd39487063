import { configuredKeyring } from '../auth/service.ts';
import { iso } from '../clock.ts';
import { createUnsubscribeTokens } from '../suppressions/unsubscribe-token.ts';
import { parseOptions, row, runCli, UsageError } from './support.ts';

export const KEYS_HELP = `Usage:
  herald keys rotate          make a new signing key; the old one stays published until its tokens expired
  herald keys list            the keys in the store and until when retired ones stay published
  herald keys remove --kid=K  drop a key at once (a compromised key): its tokens stop verifying
                              (write --kid=K: a key id may begin with "-")
  herald keys rotate-unsubscribe
                              a new key for one-click unsubscribe links; links made with the
                              old keys keep working (they are kept)

Examples:
  herald keys rotate          (scheduled, e.g. monthly; running processes pick the new key up)
  herald keys list`;

/** `herald keys rotate|list|remove`: signing-key management in the shared store. */
export function runKeys(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return runCli(env, KEYS_HELP, async ({ config, store, clock, out }) => {
    const [action, ...rest] = args;
    // Only `remove` takes an option; anything else after an action is a mistake to refuse before
    // the action runs (`keys rotate --alg HS256` rotated with the configured algorithm).
    const { kid } = parseOptions(rest, action === 'remove' ? { kid: { type: 'string' } } : {}).values as {
      kid?: string;
    };
    const keyring = configuredKeyring(config, store, clock);
    if (action === 'rotate') {
      const { kid, retired } = await keyring.rotate();
      out(`new signing key ${kid} (${config.auth.alg})`);
      if (retired) out(`retired key ${retired} stays published until its last token has expired`);
      out(
        `Running instances sign with it within ${config.auth.keyReloadMs / 1000} s (HERALD_KEY_RELOAD_MS).`,
      );
      return 0;
    }
    if (action === 'rotate-unsubscribe') {
      const tokens = createUnsubscribeTokens(store.auth, clock, config.keyEncryptionSecret);
      const { kid, kept } = await tokens.rotate();
      out(`new unsubscribe key ${kid}; ${kept} kept, so every link already sent still works`);
      out('Running workers make new links with it within 60 s.');
      return 0;
    }
    if (action === 'list') {
      const widths = [44, 6, 8];
      out(row(['KID', 'ALG', 'STATE', 'PUBLISHED UNTIL'], widths));
      for (const key of await store.auth.listSigningKeys()) {
        const until = key.publishUntil === null ? '-' : iso(key.publishUntil);
        out(row([key.kid, key.alg, key.retiredAt === null ? 'active' : 'retired', until], widths));
      }
      return 0;
    }
    if (action === 'remove') {
      if (!kid) throw new UsageError('--kid is required');
      const active = (await store.auth.listSigningKeys()).find(
        (key) => key.kid === kid && key.retiredAt === null,
      );
      if (active) throw new Error('that is the active key: run `herald keys rotate` first');
      if (!(await store.auth.deleteSigningKey(kid))) throw new Error(`no key ${kid}`);
      out(
        `removed key ${kid}; tokens it signed no longer verify: within ${config.auth.keyReloadMs / 1000} s on running instances, ` +
          `within ${config.auth.jwksMaxAgeMs / 1000} s on those verifying with HERALD_JWKS_URL`,
      );
      return 0;
    }
    throw new UsageError(action ? `unknown action "${action}"` : 'missing action');
  });
}
