import { readdirSync, readFileSync } from 'node:fs';
import type { Sql } from './connect.ts';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

/**
 * Serialises migrations across processes: six Herald processes started together on one empty
 * database must not all try to create the same tables. Any fixed 64-bit number works.
 */
const MIGRATION_LOCK = 4_817_221_004;

/**
 * Applies every `migrations/NNN_name.sql` not applied yet, in name order, all in one
 * transaction under an advisory lock (PostgreSQL DDL is transactional: a failed migration
 * leaves nothing half-made). File names match the SQLite adapter's, so both track the same list.
 */
export async function migratePostgres(sql: Sql): Promise<string[]> {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((name) => name.endsWith('.sql'))
    .sort();
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)`;
    const rows = await tx<{ name: string }[]>`SELECT name FROM schema_migrations`;
    const applied = new Set(rows.map((row) => row.name));
    const done: string[] = [];
    for (const name of files) {
      if (applied.has(name)) continue;
      // Simple-protocol (unprepared) so one file may hold several statements.
      await tx.unsafe(readFileSync(new URL(name, MIGRATIONS_DIR), 'utf8'));
      await tx`INSERT INTO schema_migrations (name, applied_at) VALUES (${name}, ${Date.now()})`;
      done.push(name);
    }
    return done;
  });
}
