import type { Store } from '../port/index.ts';
import { openSqlite, type SqliteDb } from './open.ts';

/** The embedded SQLite adapter: one file under the data directory, WAL, synchronous=FULL. */
export function createSqliteStore(dataDir: string): Store & { db: SqliteDb } {
  const db = openSqlite(dataDir);
  const pingStatement = db.prepare('SELECT 1');
  return {
    kind: 'sqlite',
    db,
    async ping() {
      pingStatement.get();
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
