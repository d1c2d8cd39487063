import { notificationId } from '../notifications/ids.ts';
import { priorityOf, priorityRank, type Status } from '../notifications/model.ts';
import { isUrgent } from '../notifications/wakeup.ts';
import { firstSteps, type RunState } from '../workflows/advance.ts';
import type { RunStatus, WorkflowRecord } from '../workflows/model.ts';
import type {
  AdvanceResult,
  DigestValue,
  NewRun,
  NewTrigger,
  RunNotification,
  RunRecord,
  RunStart,
  RunStepRecord,
  TriggerFanOutStep,
} from './port/workflow-runs.ts';

type Int = number | string;

/** A workflow_runs row as both adapters select it (RUN_COLUMNS). */
export interface RunRow {
  seq: Int;
  id: string;
  tenant: string;
  workflow_key: string;
  version: Int;
  recipient_id: string;
  trigger_id: string;
  status: string;
  step_index: Int;
  priority: Int;
  locale: string | null;
  variables: string | null;
  digest: string | null;
  steps: string;
  due_at: Int | null;
  created_at: Int;
  updated_at: Int;
  trace_context: string | null;
}

export const RUN_COLUMNS = `seq, id, tenant, workflow_key, version, recipient_id, trigger_id, status, step_index,
  priority, locale, variables, digest, steps, due_at, created_at, updated_at, trace_context`;

export function runFromRow(row: RunRow): RunRecord & { seq: number } {
  return {
    seq: Number(row.seq),
    id: row.id,
    tenant: row.tenant,
    workflowKey: row.workflow_key,
    version: Number(row.version),
    recipientId: row.recipient_id,
    triggerId: row.trigger_id,
    status: row.status as RunStatus,
    stepIndex: Number(row.step_index),
    priority: priorityOf(Number(row.priority)),
    locale: row.locale,
    variables: row.variables === null ? null : (JSON.parse(row.variables) as Record<string, unknown>),
    digest: row.digest === null ? null : (JSON.parse(row.digest) as DigestValue),
    steps: JSON.parse(row.steps) as RunStepRecord[],
    dueAt: row.due_at === null ? null : Number(row.due_at),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    traceContext: row.trace_context ?? null,
  };
}

/** The statuses a run has work in: a cancel ends only these. */
export const LIVE_RUN_STATUSES_SQL = "'RUNNING', 'WAITING'";

/**
 * The columns every run of a trigger shares (a new run's row: these, its `id` and `recipientId`),
 * for either dialect: RUNNING at its first step, due at `scheduledAt` or now, or at `start` when
 * the trigger took its first steps.
 */
export function runColumnsOf(t: NewTrigger, start?: RunStart | null) {
  return {
    tenant: t.tenant,
    workflowKey: t.workflowKey,
    version: t.version,
    triggerId: t.id,
    priority: priorityRank(t.priority),
    locale: t.locale,
    variables: t.variables,
    steps: JSON.stringify(start?.steps ?? Array.from({ length: t.steps }, () => ({ status: 'PENDING' }))),
    dueAt: start ? start.dueAt : (t.scheduledAt ?? t.createdAt),
    now: t.createdAt,
    traceContext: t.traceContext,
    status: start?.status ?? ('RUNNING' as RunStatus),
    stepIndex: start?.stepIndex ?? 0,
  };
}

/** A topic trigger's runs for a chunk of subscribers: new IDs, made in the chunk's transaction. */
export const runsFor = (recipientIds: readonly string[], now: number): NewRun[] =>
  recipientIds.map((recipientId) => ({ id: notificationId(now), recipientId }));

/**
 * Whether a step changed the run's status: the change is then logged in the step's transaction
 * (a status log row, rows-status.ts `runEventSeq`) and counted.
 */
export const statusChanged = (run: RunRecord, state: RunState): boolean => state.status !== run.status;

/** Counts a run's move into the step's result (its status, its notifications). */
export function countAdvance(result: AdvanceResult, run: RunRecord, state: RunState): void {
  result.advanced++;
  result.made += state.made;
  if (state.made > 0 && isUrgent(run.priority)) result.urgent = true;
  if (statusChanged(run, state)) result.entered[state.status] = (result.entered[state.status] ?? 0) + 1;
}

/** An engine step's result before it took any run. */
export const noAdvance = (): AdvanceResult => ({
  advanced: 0,
  made: 0,
  urgent: false,
  entered: {},
  missing: [],
});

/** The named values that write a run's new state back. */
export function stateValues(run: RunRecord, state: RunState, now: number) {
  return {
    id: run.id,
    status: state.status,
    stepIndex: state.stepIndex,
    steps: JSON.stringify(state.steps),
    digest: state.digest === null ? null : JSON.stringify(state.digest),
    dueAt: state.dueAt,
    now,
  };
}

/** The trigger row's named values. */
export function triggerValues(t: NewTrigger) {
  return { ...t, priority: priorityRank(t.priority), pending: t.topic === null ? 0 : 1 };
}

/** A notification of a run as both adapters select it. */
export interface RunNotificationRow {
  id: string;
  channel: string;
  status: string;
  read: Int | boolean;
}

export const runNotificationFromRow = (row: RunNotificationRow): RunNotification => ({
  id: row.id,
  channel: row.channel,
  status: row.status as Status,
  read: row.read === true || Number(row.read) === 1,
});

/** What a digest opened by a run holds: its own variables first. */
export const openItems = (item: unknown) => `[${JSON.stringify(item)}]`;

/** A digest whose row is gone when its run closes it (never in practice): the run's own variables. */
export const loneDigest = (run: RunRecord): DigestValue => ({ count: 1, items: [run.variables ?? {}] });

/** A digest row's count and items as read back. */
export const digestOf = (row: { count: Int; items: string }): DigestValue => ({
  count: Number(row.count),
  items: JSON.parse(row.items) as unknown[],
});

/** A topic trigger as its fan-out reads it. */
export interface TopicTriggerRow {
  seq: Int;
  id: string;
  tenant: string;
  workflow_key: string;
  version: Int;
  steps: Int;
  topic_key: string;
  priority: Int;
  locale: string | null;
  variables: string | null;
  scheduled_at: Int | null;
  fanned_to: string;
  until_seq: Int | null;
  trace_context: string | null;
}

/**
 * Where a topic trigger's runs made at `now` start: their first steps taken in the chunk's
 * transaction by the rule a trigger of recipients follows (workflows/advance.ts `firstSteps`;
 * decision 0060), for runs due now of a version that exists; null otherwise (stored RUNNING at
 * their first step, for the engine).
 */
export function topicStart(
  t: TopicTriggerRow,
  definition: WorkflowRecord | null,
  now: number,
): RunStart | null {
  if (definition === null || (t.scheduled_at !== null && Number(t.scheduled_at) > now)) return null;
  return firstSteps(
    definition,
    t.variables === null ? null : (JSON.parse(t.variables) as Record<string, unknown>),
    now,
  );
}

/** The fan-out step of a trigger whose version the engine has not loaded yet: nothing made. */
export const fanOutMissing = (t: TopicTriggerRow): TriggerFanOutStep => ({
  triggerId: t.id,
  made: 0,
  finished: false,
  started: 'RUNNING',
  missing: { tenant: t.tenant, workflowKey: t.workflow_key, version: Number(t.version) },
});

/** The trigger a topic's runs start from (only the run columns are read). */
export function topicTriggerOf(t: TopicTriggerRow, now: number): NewTrigger {
  return {
    id: t.id,
    tenant: t.tenant,
    workflowKey: t.workflow_key,
    version: Number(t.version),
    steps: Number(t.steps),
    topic: t.topic_key,
    priority: priorityOf(Number(t.priority)),
    locale: t.locale,
    variables: t.variables,
    scheduledAt: t.scheduled_at === null ? null : Number(t.scheduled_at),
    idempotencyKey: null,
    requestHash: null,
    answer: '',
    createdAt: now,
    traceContext: t.trace_context ?? null,
  };
}
