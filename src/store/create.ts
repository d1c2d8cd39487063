import type { Config } from '../config/config.ts';
import type { Store } from './port/index.ts';
import { createSqliteStore } from './sqlite/index.ts';

/** Opens the store the config names: PostgreSQL when DATABASE_URL is set, else embedded SQLite. */
export async function createStore(config: Config): Promise<Store> {
  if (config.databaseUrl) {
    throw new Error('PostgreSQL storage is not built yet (see the scale-out issue); unset DATABASE_URL.');
  }
  return createSqliteStore(config.dataDir);
}
