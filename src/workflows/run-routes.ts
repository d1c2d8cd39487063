import { Type } from '@sinclair/typebox';
import { iso } from '../clock.ts';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { exampleOf, withExample } from '../http/examples.ts';
import { numericCursor, PageSchema, pageOf } from '../http/page.ts';
import { literals } from '../http/schema.ts';
import { requestSpan } from '../http/trace-hooks.ts';
import type { RouteModule } from '../http/types.ts';
import type { Metrics } from '../metrics.ts';
import { PRIORITIES } from '../notifications/model.ts';
import type { RunRecord } from '../store/port/workflow-runs.ts';
import { RUN_STATUSES, STEP_STATUSES, STEP_TYPES, type WorkflowRecord } from './model.ts';
import { type TriggerBody, triggerWorkflow } from './trigger.ts';
import type { TriggerCommit } from './trigger-commit.ts';

const EXAMPLE_ID = '019b76da-a800-70e3-aa1e-88b1e3a76f07';
const EXAMPLE_RUN = '019b76da-a800-70e3-aa1e-88b1e3a76f08';
const WORKFLOW_KEY = Type.String({ minLength: 1, maxLength: 128, examples: ['comment-digest'] });

const TriggerSchema = withExample(
  Type.Object(
    {
      recipients: Type.Optional(
        Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { minItems: 1, maxItems: 1000 }),
      ),
      topic: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
      variables: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      priority: Type.Optional(literals(PRIORITIES)),
      locale: Type.Optional(Type.String({ maxLength: 64 })),
      scheduledAt: Type.Optional(Type.String({ format: 'date-time' })),
    },
    { additionalProperties: false },
  ),
  { recipients: ['user-42', 'user-43'], variables: { projectId: 'p-1', comment: 'Looks good' } },
);

const Triggered = withExample(
  Type.Object({
    triggerId: Type.String(),
    runs: Type.Optional(Type.Array(Type.Object({ recipientId: Type.String(), runId: Type.String() }))),
    refused: Type.Optional(
      Type.Array(Type.Object({ recipientId: Type.String(), code: Type.Literal('RECIPIENT_NOT_FOUND') })),
    ),
  }),
  {
    triggerId: EXAMPLE_ID,
    runs: [{ recipientId: 'user-42', runId: EXAMPLE_RUN }],
    refused: [{ recipientId: 'user-43', code: 'RECIPIENT_NOT_FOUND' }],
  },
);

const RunView = withExample(
  Type.Object({
    runId: Type.String(),
    workflow: Type.String({ description: "The workflow's key" }),
    version: Type.Integer({ description: 'The version the run started with and keeps' }),
    recipientId: Type.String(),
    triggerId: Type.String(),
    status: literals(RUN_STATUSES),
    priority: literals(PRIORITIES),
    steps: Type.Array(
      Type.Object({
        index: Type.Integer(),
        type: literals(STEP_TYPES),
        status: literals(STEP_STATUSES),
        notificationId: Type.Optional(Type.String()),
        at: Type.Optional(Type.String({ format: 'date-time' })),
        until: Type.Optional(Type.String({ format: 'date-time' })),
      }),
    ),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  }),
  {
    runId: EXAMPLE_RUN,
    workflow: 'comment-digest',
    version: 2,
    recipientId: 'user-42',
    triggerId: EXAMPLE_ID,
    status: 'WAITING',
    priority: 'NORMAL',
    steps: [
      {
        index: 0,
        type: 'digest',
        status: 'WAITING',
        at: '2026-11-28T09:30:00.000Z',
        until: '2026-11-28T10:30:00.000Z',
      },
      { index: 1, type: 'send', status: 'PENDING' },
    ],
    createdAt: '2026-11-28T09:30:00.000Z',
    updatedAt: '2026-11-28T09:30:00.000Z',
  },
);

const RunPage = withExample(PageSchema(RunView), { items: [exampleOf(RunView)], nextCursor: null });
const RunId = Type.Object({ runId: Type.String({ minLength: 1, maxLength: 64, examples: [EXAMPLE_RUN] }) });
const runCursor = numericCursor('wr');

const notFound = (id: string) => new HeraldError('NOT_FOUND', `No workflow run ${id}.`);

/**
 * Triggers and runs of workflows (docs/workflows.md "Runs"). The runs themselves are
 * moved on by the worker's engine (engine.ts); these routes start, read and cancel them.
 */
export const workflowRunRoutes: RouteModule<CoreDeps & { metrics?: Metrics; triggers: TriggerCommit }> = (
  app,
  deps,
) => {
  const { store, clock } = deps;
  const tags = ['workflows'];

  /** The run as the API shows it: each step's type from its version, a send that ended SKIPPED shown SKIPPED. */
  const view = async (run: RunRecord, definitions: Map<string, WorkflowRecord | null>) => {
    const key = `${run.workflowKey}\u0000${run.version}`;
    if (!definitions.has(key)) {
      definitions.set(key, await store.workflows.get(run.tenant, run.workflowKey, run.version));
    }
    const definition = definitions.get(key);
    const sent = run.steps.flatMap((s) => (s.notificationId === undefined ? [] : [s.notificationId]));
    const skipped = new Set(
      sent.length === 0
        ? []
        : (await store.workflowRuns.notifications(run.tenant, run.recipientId, sent))
            .filter((n) => n.status === 'SKIPPED')
            .map((n) => n.id),
    );
    return {
      runId: run.id,
      workflow: run.workflowKey,
      version: run.version,
      recipientId: run.recipientId,
      triggerId: run.triggerId,
      status: run.status,
      priority: run.priority,
      steps: run.steps.map((s, index) => ({
        index,
        type: definition?.steps[index]?.type ?? 'send',
        status: s.notificationId !== undefined && skipped.has(s.notificationId) ? 'SKIPPED' : s.status,
        ...(s.notificationId === undefined ? {} : { notificationId: s.notificationId }),
        ...(s.at === undefined ? {} : { at: iso(s.at) }),
        ...(s.until === undefined ? {} : { until: iso(s.until) }),
      })),
      createdAt: iso(run.createdAt),
      updatedAt: iso(run.updatedAt),
    };
  };

  app.post(
    '/workflows/:key/trigger',
    {
      config: { scope: 'notifications:send' },
      schema: {
        tags,
        summary: 'Start a run of a workflow for each recipient, or for every subscriber of a topic',
        description:
          "Scope notifications:send. `recipients` (at most 1000 IDs) or `topic`, one of the two. Each known recipient gets a run of the current version of the workflow, RUNNING from `scheduledAt` (or now), with the trigger's `variables`, `priority` and `locale`; an ID that names no recipient of the tenant is refused in `refused` (RECIPIENT_NOT_FOUND) and the others still start. For a topic the 201 has only `triggerId`: the worker makes a run for every subscriber when the fan-out starts, in chunks, exactly once. `Idempotency-Key` as for POST /notifications: a replay within 24 h answers 200 with the first answer, another body 409. 404 for an unknown workflow or topic.",
        params: Type.Object({ key: WORKFLOW_KEY }),
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
        body: TriggerSchema,
        response: { 200: Triggered, 201: Triggered },
      },
    },
    async (request, reply) => {
      const { status, answer, started } = await triggerWorkflow(
        deps,
        request.principal.tenant,
        request.params.key,
        request.body as TriggerBody,
        request.headers['idempotency-key'],
        requestSpan(request),
      );
      if (status === 201 && answer.runs && answer.runs.length > 0) {
        deps.metrics?.workflowRuns.inc({ status: 'RUNNING' }, answer.runs.length);
        // Runs whose first steps the trigger took entered their next status too.
        if (started !== undefined && started !== 'RUNNING')
          deps.metrics?.workflowRuns.inc({ status: started }, answer.runs.length);
      }
      return reply.code(status).send(answer);
    },
  );

  app.get(
    '/workflow-runs/:runId',
    {
      config: { scope: 'notifications:read' },
      schema: {
        tags,
        summary: 'A run: its status and the timeline of its steps',
        description:
          "Scope notifications:read. Each step's status (PENDING, WAITING, DONE, SKIPPED: an `if` that did not hold, or a send whose notification ended SKIPPED), its notification and times. Another tenant's run is 404.",
        params: RunId,
        response: { 200: RunView },
      },
    },
    async (request) => {
      const run = await store.workflowRuns.get(request.principal.tenant, request.params.runId);
      if (!run) throw notFound(request.params.runId);
      return view(run, new Map());
    },
  );

  app.get(
    '/workflow-runs',
    {
      config: { scope: 'notifications:read' },
      schema: {
        tags,
        summary: 'Runs, newest first, filtered by workflow, recipient, trigger or status',
        description: 'Scope notifications:read. Cursor pages (`nextCursor`, null on the last page).',
        querystring: Type.Object({
          workflow: Type.Optional(WORKFLOW_KEY),
          recipientId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
          triggerId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          status: Type.Optional(literals(RUN_STATUSES)),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
          cursor: Type.Optional(Type.String({ maxLength: 200 })),
        }),
        response: { 200: RunPage },
      },
    },
    async (request) => {
      const { limit = 50, cursor, ...filter } = request.query;
      const before = runCursor.decode(cursor);
      const rows = await store.workflowRuns.list(request.principal.tenant, filter, {
        limit: limit + 1,
        before,
      });
      const { page, nextCursor } = pageOf(rows, limit, runCursor, (r) => r.seq);
      const definitions = new Map<string, WorkflowRecord | null>();
      const items = [];
      for (const run of page) items.push(await view(run, definitions));
      return { items, nextCursor };
    },
  );

  app.post(
    '/workflow-runs/:runId/cancel',
    {
      config: { scope: 'notifications:send' },
      schema: {
        tags,
        summary: 'Stop a run that has not ended',
        description:
          "Scope notifications:send. The run ends CANCELLED: no later step runs (notifications it already made stay as they are). A run that has ended (COMPLETED, DIGESTED, THROTTLED, CANCELLED, FAILED) is 409; another tenant's is 404.",
        params: RunId,
        response: { 200: RunView },
      },
    },
    async (request) => {
      const { tenant } = request.principal;
      const cancelled = await store.workflowRuns.cancel(tenant, request.params.runId, clock.now());
      if (cancelled === null) throw notFound(request.params.runId);
      if (cancelled === 'ended') {
        throw new HeraldError('INVALID_STATE', `The workflow run ${request.params.runId} has ended.`);
      }
      deps.metrics?.workflowRuns.inc({ status: 'CANCELLED' });
      return view(cancelled, new Map());
    },
  );
};
