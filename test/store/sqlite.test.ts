// Runs every store behaviour suite (test/store/*.suite.ts) against the embedded SQLite adapter.
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';
import { runStoreSuites } from './suites.ts';

await runStoreSuites('sqlite', async () => createSqliteStore(tempDir()));
