/**
 * POST /workflows/{key}/trigger (docs/workflow-runs.md "Triggers"): the runs a trigger starts,
 * stored with the trigger in one transaction (shared with the triggers that arrive with it:
 * trigger-commit.ts), and its Idempotency-Key (a replay within 24 h answers the first answer,
 * another body with the key is 409).
 */
import type { Span } from '@opentelemetry/api';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { notificationId, requestHash } from '../notifications/ids.ts';
import { checkIdempotencyKey, IDEMPOTENCY_WINDOW_MS } from '../notifications/ingest.ts';
import type { Priority } from '../notifications/model.ts';
import type { NewTrigger } from '../store/port/workflow-runs.ts';
import { canonicalLocale, LOCALE_MESSAGE } from '../templates/locale.ts';
import { traceparentOf, withEvent } from '../tracing/tracer.ts';
import { firstSteps } from './advance.ts';
import type { RunStatus } from './model.ts';
import type { TriggerCommit } from './trigger-commit.ts';

/** A trigger's body once its schema held (run-routes.ts). */
export interface TriggerBody {
  recipients?: string[];
  topic?: string;
  variables?: Record<string, unknown>;
  priority?: Priority;
  locale?: string;
  scheduledAt?: string;
}

/** The 201 (and every replay of it). */
export interface TriggerAnswer {
  triggerId: string;
  runs?: Array<{ recipientId: string; runId: string }>;
  refused?: Array<{ recipientId: string; code: 'RECIPIENT_NOT_FOUND' }>;
}

const invalid = (path: string, message: string, detail = 'The trigger is invalid.') =>
  new HeraldError('VALIDATION_FAILED', detail, { errors: [{ path, message }] });

/** What the schema cannot say: one of recipients and topic, a real time, a known locale. */
function checkBody(body: TriggerBody): { scheduledAt: number | null; locale: string | null } {
  if ((body.recipients === undefined) === (body.topic === undefined)) {
    throw invalid('body/recipients', 'must be given, or a topic instead: give one of the two');
  }
  let scheduledAt: number | null = null;
  if (body.scheduledAt !== undefined) {
    scheduledAt = Date.parse(body.scheduledAt);
    if (Number.isNaN(scheduledAt)) throw invalid('body/scheduledAt', 'must be an ISO 8601 date-time');
  }
  let locale: string | null = null;
  if (body.locale !== undefined) {
    locale = canonicalLocale(body.locale) ?? null;
    if (locale === null) throw invalid('body/locale', LOCALE_MESSAGE);
  }
  return { scheduledAt, locale };
}

/** Starts a workflow's runs for a trigger; `status` 201 for a new trigger, 200 for a replay. */
export async function triggerWorkflow(
  deps: CoreDeps & { triggers: TriggerCommit },
  tenant: string,
  key: string,
  body: TriggerBody,
  idempotencyKey: string | undefined,
  /** The trigger request's server span when it is traced (http/trace-hooks.ts `requestSpan`). */
  span: Span | undefined,
): Promise<{ status: 200 | 201; answer: TriggerAnswer; started?: RunStatus }> {
  const { store, clock } = deps;
  const now = clock.now();
  checkIdempotencyKey(idempotencyKey);
  const { scheduledAt, locale } = checkBody(body);
  const hash = idempotencyKey === undefined ? null : requestHash({ key, body });
  const since = now - IDEMPOTENCY_WINDOW_MS;
  const replay = (hit: { answer: string; requestHash: string | null }) => {
    if (hit.requestHash !== hash) {
      throw new HeraldError(
        'IDEMPOTENCY_CONFLICT',
        'This Idempotency-Key was used within 24 hours with a different body.',
      );
    }
    return { status: 200 as const, answer: JSON.parse(hit.answer) as TriggerAnswer };
  };
  if (idempotencyKey !== undefined) {
    const hit = await store.workflowRuns.findTrigger(tenant, idempotencyKey, since);
    if (hit) return replay(hit);
  }
  const workflow = await store.workflows.get(tenant, key);
  if (!workflow) throw new HeraldError('NOT_FOUND', `No workflow "${key}".`);
  const triggerId = notificationId(now);
  const answer: TriggerAnswer = { triggerId };
  let runs: Array<{ id: string; recipientId: string }> = [];
  if (body.topic !== undefined) {
    if (!(await store.topics.get(tenant, body.topic)))
      throw new HeraldError('NOT_FOUND', `No topic "${body.topic}".`);
  } else {
    // Each ID once, in the order given; unknown ones refused one by one (as topic subscribers are).
    const ids = [...new Set(body.recipients)];
    const known = new Set(await store.recipients.known(tenant, ids));
    runs = ids.filter((id) => known.has(id)).map((recipientId) => ({ id: notificationId(now), recipientId }));
    answer.runs = runs.map((r) => ({ recipientId: r.recipientId, runId: r.id }));
    answer.refused = ids
      .filter((id) => !known.has(id))
      .map((recipientId) => ({ recipientId, code: 'RECIPIENT_NOT_FOUND' as const }));
  }
  const trigger: NewTrigger = {
    id: triggerId,
    tenant,
    workflowKey: workflow.key,
    version: workflow.version,
    steps: workflow.steps.length,
    topic: body.topic ?? null,
    priority: body.priority ?? 'NORMAL',
    locale,
    variables: body.variables === undefined ? null : JSON.stringify(body.variables),
    scheduledAt,
    idempotencyKey: idempotencyKey ?? null,
    requestHash: hash,
    answer: JSON.stringify(answer),
    createdAt: now,
    // The trigger request's span (when sampled): every notification of its runs is processed in its trace.
    traceContext: traceparentOf(span),
  };
  // Runs due now take their first steps here when no step asks the database (a delay): each is
  // then written once, in the state they leave it; otherwise the engine takes them from their
  // first step, in its priority order.
  const start =
    runs.length > 0 && (scheduledAt === null || scheduledAt <= now)
      ? firstSteps(workflow, body.variables ?? null, now)
      : null;
  // Answers once committed (a `commit` event of the request's span, as ingest's); the commit wakes
  // the engine, which goes on with the runs (a topic's: its fan-out).
  const hit = await withEvent(span, 'commit', { 'herald.runs': runs.length }, () =>
    deps.triggers.submit({ trigger, runs, start }),
  );
  if (hit) return replay(hit);
  return { status: 201, answer, started: start?.status ?? 'RUNNING' };
}
