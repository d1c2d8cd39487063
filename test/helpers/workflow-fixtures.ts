// Workflow records and triggers as the run store takes them, for the store suite, the workflow
// tests and the `workflows` bench scenario (one shape, so a new field of NewTrigger is added once).
import type { NewTrigger } from '../../src/store/port/workflow-runs.ts';
import type { WorkflowRecord, WorkflowStep } from '../../src/workflows/model.ts';

/** A stored workflow version with no name or category, made at `at`. */
export const workflowRecord = (key: string, steps: WorkflowStep[], version = 1, at = 0): WorkflowRecord => ({
  key,
  version,
  name: null,
  category: null,
  steps,
  createdAt: at,
  updatedAt: at,
});

/** A trigger of `w` in `tenant`, NORMAL, no topic or idempotency key; `over` sets the rest. */
export const newTrigger = (
  w: WorkflowRecord,
  tenant: string,
  over: Partial<NewTrigger> & Pick<NewTrigger, 'id' | 'createdAt'>,
): NewTrigger => ({
  tenant,
  workflowKey: w.key,
  version: w.version,
  steps: w.steps.length,
  topic: null,
  priority: 'NORMAL',
  locale: null,
  variables: null,
  scheduledAt: null,
  idempotencyKey: null,
  requestHash: null,
  answer: '{}',
  traceContext: null,
  ...over,
});
