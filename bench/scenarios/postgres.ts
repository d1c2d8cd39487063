import { dispatchOn } from './dispatch.ts';
import { fanOutPostgresScenario } from './fan-out.ts';
import { inboxPostgresScenario } from './inbox.ts';
import { ingestOn } from './ingest.ts';
import { isolationPeerPostgresScenario } from './isolation-peer.ts';
import type { Scenario } from './types.ts';
import { workflowsPostgresScenario } from './workflows.ts';
import { workflowsProcessPostgresScenario } from './workflows-postgres.ts';

/**
 * `--postgres`: ingest and dispatch again on PostgreSQL with two API processes, and CRITICAL
 * beside a LOW drain against the graphile-worker peer.
 */
export const postgresScenarios: Scenario[] = [
  {
    name: 'ingest-postgres',
    title: '1. Ingest on PostgreSQL with two API processes',
    run: (options) => ingestOn('postgres', options),
  },
  {
    name: 'dispatch-postgres',
    title: '4. Dispatch on PostgreSQL',
    run: (options) => dispatchOn('postgres', options),
  },
  isolationPeerPostgresScenario,
  fanOutPostgresScenario,
  inboxPostgresScenario,
  workflowsProcessPostgresScenario,
  workflowsPostgresScenario,
];
