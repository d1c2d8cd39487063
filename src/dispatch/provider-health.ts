import type { ProviderDeps } from '../providers/types.ts';

/** What a send told of its provider: it answered (`working`), or it failed to (`failing`). */
export type ProviderHealth = 'working' | 'failing';

/**
 * The server log's view of each provider: a line when a provider starts failing (warn, with the
 * failure) and one when it works again (info), not one per message, which the notification's
 * events already hold. Kept per provider name, per worker.
 */
export function createProviderHealthLog(log: Pick<ProviderDeps['log'], 'info' | 'warn'>) {
  const failing = new Set<string>();
  return (provider: string, health: ProviderHealth, detail?: string) => {
    if (health === 'failing') {
      if (failing.has(provider)) return;
      failing.add(provider);
      log.warn({ provider, detail }, `provider ${provider} is failing: ${detail}`);
    } else if (failing.delete(provider)) {
      log.info({ provider }, `provider ${provider} works again`);
    }
  };
}

export type ProviderHealthLog = ReturnType<typeof createProviderHealthLog>;
