// Runs every store behaviour suite (test/store/*.suite.ts) against a real PostgreSQL: the
// embedded one the helper starts, or HERALD_TEST_DATABASE_URL.
import { after } from 'node:test';
import type { Store } from '../../src/store/port/index.ts';
import { createPostgresStore } from '../../src/store/postgres/index.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';
import { sharedOutcomeCountsSuite } from './outcome-counts-shared.ts';
import { fanOutStepSuite } from './postgres-fan-out-steps.ts';
import { fanOutWorkersSuite } from './postgres-fan-out-workers.ts';
import { laneTailSuite } from './postgres-lane-tail.ts';
import { statementPlansSuite } from './postgres-plans.ts';
import { writeCostSuite } from './postgres-write-cost.ts';
import { runStoreSuites } from './suites.ts';

const server = await sharedPostgres();
// Migrate once into a template database; each store then gets a copy (CREATE DATABASE ...
// TEMPLATE copies files, far faster than running every migration again).
const templateUrl = await server.createDatabase('herald_template');
await (await createPostgresStore(templateUrl)).close();
const templateName = new URL(templateUrl).pathname.slice(1);

const opened: Store[] = [];
const statements = new Set<string>();
const openPostgres = async () => {
  const url = await server.createDatabase('herald_store', templateName);
  const store = await createPostgresStore(url, { max: 4, onStatement: (text) => statements.add(text) });
  opened.push(store);
  return store;
};

after(async () => {
  for (const store of opened) await store.close().catch(() => undefined);
  await stopSharedPostgres();
});

await runStoreSuites('postgres', openPostgres);
// Its own statements (EXPLAIN, ANALYZE) are not the store's: not collected for the plans check.
laneTailSuite(async () => {
  const store = await createPostgresStore(await server.createDatabase('herald_tail', templateName), {
    max: 4,
  });
  opened.push(store);
  return store;
});
writeCostSuite(async (onStatement) => {
  const url = await server.createDatabase('herald_cost', templateName);
  const store = await createPostgresStore(url, { max: 4, ...(onStatement ? { onStatement } : {}) });
  opened.push(store);
  return store;
});
// Two stores on one database, as two worker processes would open it.
sharedOutcomeCountsSuite('postgres', async () => {
  const url = await server.createDatabase('herald_shared', templateName);
  return [await createPostgresStore(url, { max: 4 }), await createPostgresStore(url, { max: 4 })];
});
// Two stores on one database, as two worker processes fanning out one broadcast.
fanOutWorkersSuite(async () => {
  const url = await server.createDatabase('herald_fan_out', templateName);
  const pair = [
    await createPostgresStore(url, { max: 4 }),
    await createPostgresStore(url, { max: 4 }),
  ] as const;
  opened.push(...pair);
  return [...pair];
});
// A store whose database commits synchronously (the test server itself does not).
fanOutStepSuite(async () => {
  const url = await server.createDatabase('herald_fan_out_step', templateName);
  const admin = await createPostgresStore(url, { max: 1 });
  await admin.sql.unsafe(`ALTER DATABASE "${new URL(url).pathname.slice(1)}" SET synchronous_commit = on`);
  await admin.close();
  const store = await createPostgresStore(url, { max: 4 });
  opened.push(store);
  return store;
});
statementPlansSuite(statements, () => server.createDatabase('herald_plans', templateName));
