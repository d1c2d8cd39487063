// The two adapters run twin migrations (src/store/{sqlite,postgres}/migrations, same names).
// This catches drift: an area that adds a SQLite migration, table or column without its
// PostgreSQL twin fails here by name instead of at run time on a scaled-out deployment.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { createPostgresStore } from '../../src/store/postgres/index.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';

/**
 * Columns only PostgreSQL needs, each with its reason: notification_events.tx orders the status
 * log across concurrent transactions (SQLite has one writer, so its event ids are that order).
 */
const POSTGRES_ONLY: Record<string, string[]> = { notification_events: ['tx'] };
/**
 * Tables only SQLite needs, each with its reason: its recipients' index of workflow runs, entered
 * in bulk off its one writer's trigger commits, and how far (decision 0064); PostgreSQL keeps the
 * index every insert enters.
 */
const SQLITE_ONLY = ['workflow_run_recipients', 'workflow_runs_indexed'];

const migrations = (adapter: string) =>
  readdirSync(new URL(`../../src/store/${adapter}/migrations/`, import.meta.url))
    .filter((name) => name.endsWith('.sql'))
    .sort();

describe('SQLite and PostgreSQL schemas', () => {
  after(stopSharedPostgres);

  it('have a PostgreSQL migration of the same name for every SQLite one', () => {
    assert.deepEqual(migrations('postgres'), migrations('sqlite'));
  });

  it('have the same tables with the same columns', async () => {
    const sqlite = createSqliteStore(tempDir());
    const tables = sqlite.db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .all() as Array<{ name: string }>;
    const sqliteSchema = Object.fromEntries(
      tables.map(({ name }) => [
        name,
        (sqlite.db.prepare(`PRAGMA table_info(${name})`).all() as Array<{ name: string }>)
          .map((c) => c.name)
          .sort(),
      ]),
    );
    await sqlite.close();
    for (const table of SQLITE_ONLY) delete sqliteSchema[table];
    const server = await sharedPostgres();
    const pg = await createPostgresStore(await server.createDatabase('herald_parity'), { max: 1 });
    try {
      const columns = await pg.sql<{ table_name: string; column_name: string }[]>`
        SELECT table_name, column_name FROM information_schema.columns
         WHERE table_schema = 'public' ORDER BY table_name, column_name`;
      const pgSchema: Record<string, string[]> = {};
      for (const c of columns) {
        pgSchema[c.table_name] ??= [];
        pgSchema[c.table_name]?.push(c.column_name);
      }
      for (const [table, only] of Object.entries(POSTGRES_ONLY)) {
        pgSchema[table] = (pgSchema[table] ?? []).filter((column) => !only.includes(column));
      }
      for (const list of Object.values(pgSchema)) list.sort();
      assert.deepEqual(pgSchema, sqliteSchema);
    } finally {
      await pg.close();
    }
  });
});
