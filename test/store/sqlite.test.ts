// Runs every store behaviour suite (test/store/*.suite.ts) against the embedded SQLite adapter.
// Suites are found by file name, as test/store/postgres.test.ts finds them, so an area's new
// suite runs on both databases without an edit.
import { readdirSync } from 'node:fs';
import type { Store } from '../../src/store/port/index.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';

type Suite = (name: string, open: () => Promise<Store>) => void;

const openSqlite = async (): Promise<Store> => createSqliteStore(tempDir());

const dir = new URL('./', import.meta.url);
for (const file of readdirSync(dir)
  .filter((name) => name.endsWith('.suite.ts'))
  .sort()) {
  const module = (await import(new URL(file, dir).href)) as Record<string, unknown>;
  for (const [name, value] of Object.entries(module)) {
    if (name.endsWith('Suite') && typeof value === 'function') (value as Suite)('sqlite', openSqlite);
  }
}
