import { join } from 'node:path';
import type { Config } from '../config/config.ts';
import type { Store } from './port/index.ts';
import { createSqliteStore } from './sqlite/index.ts';
import { READER_CACHE_MIB, SQLITE_FILE } from './sqlite/open.ts';

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

/**
 * Which store the config names, in words a person can check: the SQLite file's absolute path, or
 * the PostgreSQL host, port and database (never the user's password). The CLI prints it, so a
 * command run against another HERALD_DATA_DIR than the server's is seen at once.
 */
export function describeStore(config: Pick<Config, 'databaseUrl' | 'dataDir'>): string {
  if (!config.databaseUrl) return `SQLite database ${join(config.dataDir, SQLITE_FILE)}`;
  const url = new URL(config.databaseUrl);
  const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || "(the user's default)";
  const user = url.username ? `${decodeURIComponent(url.username)}@` : '';
  return `PostgreSQL database ${database} at ${user}${url.host || 'localhost'}`;
}
