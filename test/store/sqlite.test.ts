// Runs every store behaviour suite (test/store/*.suite.ts) against the embedded SQLite adapter.
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';
import { sharedOutcomeCountsSuite } from './outcome-counts-shared.ts';
import { runStoreSuites } from './suites.ts';

await runStoreSuites('sqlite', async () => createSqliteStore(tempDir()));
// Two stores on one file, as two processes would open it.
sharedOutcomeCountsSuite('sqlite', async () => {
  const dir = tempDir();
  return [createSqliteStore(dir), createSqliteStore(dir)];
});
