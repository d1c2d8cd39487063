import type { Config } from '../config/config.ts';
import type { Store } from './port/index.ts';
import { createSqliteStore } from './sqlite/index.ts';

/** Opens the store the config names: PostgreSQL when DATABASE_URL is set, else embedded SQLite. */
export async function createStore(config: Config): Promise<Store> {
  if (config.databaseUrl) {
    // Imported only when used: an embedded deployment never loads the PostgreSQL driver.
    const { createPostgresStore } = await import('./postgres/index.ts');
    return createPostgresStore(config.databaseUrl, {
      max: config.databasePoolSize,
      applicationName: `herald ${config.roles.join(',')}`,
    });
  }
  return createSqliteStore(config.dataDir);
}
