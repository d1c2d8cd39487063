import type { Config } from '../config/config.ts';
import type { Store } from './port/index.ts';
import { createSqliteStore } from './sqlite/index.ts';
import { READER_CACHE_MIB } from './sqlite/open.ts';

/**
 * Opens the store the config names: PostgreSQL when DATABASE_URL is set, else embedded SQLite.
 * `claims: false` for a connection that never runs the worker's claims (the main thread beside a
 * dispatch thread): on SQLite it keeps a smaller page cache.
 */
export async function createStore(config: Config, options: { claims?: boolean } = {}): Promise<Store> {
  if (config.databaseUrl) {
    // Imported only when used: an embedded deployment never loads the PostgreSQL driver.
    const { createPostgresStore } = await import('./postgres/index.ts');
    return createPostgresStore(config.databaseUrl, {
      max: config.databasePoolSize,
      applicationName: `herald ${config.roles.join(',')}`,
    });
  }
  return createSqliteStore(config.dataDir, options.claims === false ? READER_CACHE_MIB : undefined);
}
