import { abuseScenario } from './abuse.ts';
import { authScenario } from './auth.ts';
import { batchApiOnlyScenario, batchScenario } from './batch.ts';
import { callbacksScenario } from './callbacks.ts';
import { catchUpScenario } from './catch-up.ts';
import { claimScenario } from './claim.ts';
import { dispatchScenario } from './dispatch.ts';
import { failoverScenario } from './failover.ts';
import { fanOutScenario } from './fan-out.ts';
import { gatewayScenario } from './gateway.ts';
import { inboxScenario } from './inbox.ts';
import { ingestApiOnlyScenario, ingestScenario } from './ingest.ts';
import { ingestQuotasScenario } from './ingest-quotas.ts';
import { isolationScenario } from './isolation.ts';
import { isolationPeerScenario } from './isolation-peer.ts';
import { liquidCriticalScenario, liquidParseScenario } from './liquid.ts';
import { memoryScenario } from './memory.ts';
import { memoryPeopleScenario } from './memory-people.ts';
import { peerScenario } from './peer.ts';
import { peopleScenario } from './people.ts';
import { recipientsImportScenario } from './recipients-import.ts';
import { renderScenario } from './render.ts';
import { startupScenario } from './startup.ts';
import { suppressionsScenario } from './suppressions.ts';
import { tracingScenario } from './tracing.ts';
import type { Scenario } from './types.ts';
import { workflowsScenario } from './workflows.ts';
import { workflowsProcessScenario } from './workflows-process.ts';

/** Every scenario of the issue, in its order. */
export const SCENARIOS: Scenario[] = [
  ingestScenario,
  ingestApiOnlyScenario,
  peerScenario,
  batchScenario,
  batchApiOnlyScenario,
  isolationScenario,
  isolationPeerScenario,
  abuseScenario,
  dispatchScenario,
  callbacksScenario,
  suppressionsScenario,
  peopleScenario,
  failoverScenario,
  claimScenario,
  catchUpScenario,
  memoryScenario,
  renderScenario,
  liquidParseScenario,
  liquidCriticalScenario,
  authScenario,
  startupScenario,
  gatewayScenario,
  recipientsImportScenario,
  fanOutScenario,
  memoryPeopleScenario,
  inboxScenario,
  workflowsScenario,
  workflowsProcessScenario,
  ingestQuotasScenario,
  tracingScenario,
];
