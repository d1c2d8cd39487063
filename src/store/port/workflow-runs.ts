import type { Priority, Status } from '../../notifications/model.ts';
import type { RunStatus, StepStatus, WorkflowRecord } from '../../workflows/model.ts';

/** A trigger ready to store (src/workflows/trigger.ts). Times are epoch ms; `variables` is JSON text. */
export interface NewTrigger {
  id: string;
  tenant: string;
  workflowKey: string;
  version: number;
  /** Steps of that version: each run's record starts with this many PENDING steps. */
  steps: number;
  /** A topic whose subscribers get runs as the engine fans it out; null for a list of recipients. */
  topic: string | null;
  priority: Priority;
  locale: string | null;
  variables: string | null;
  scheduledAt: number | null;
  idempotencyKey: string | null;
  requestHash: string | null;
  /** The 201 body, JSON, replayed to a later request with the same Idempotency-Key. */
  answer: string;
  createdAt: number;
  /** The trigger request's sampled `traceparent` (tracing/tracer.ts `traceparentOf`), kept by its runs; null untraced. */
  traceContext: string | null;
}

/** One run a trigger makes now. */
export interface NewRun {
  id: string;
  recipientId: string;
}

/**
 * The state a trigger's new runs are stored in when the trigger took their first steps
 * (workflows/advance.ts `firstSteps`): each run is written once, already there, its status
 * logged in one row of this status, which stands for RUNNING then this one (store/run-starts.ts).
 * Without it a run is stored RUNNING at its first step.
 */
export interface RunStart {
  status: RunStatus;
  stepIndex: number;
  steps: RunStepRecord[];
  dueAt: number | null;
}

/** A trigger and the runs it makes now, as one item of a group commit (src/workflows/trigger-commit.ts). */
export interface TriggerItem {
  trigger: NewTrigger;
  runs: NewRun[];
  /** Where its runs start, when the trigger took their first steps. */
  start?: RunStart | null;
}

/** A trigger's first answer for an Idempotency-Key still live. */
export interface TriggerHit {
  answer: string;
  requestHash: string | null;
}

/** A step's place in a run (docs/workflow-runs.md): times epoch ms. */
export interface RunStepRecord {
  status: StepStatus;
  notificationId?: string;
  at?: number;
  until?: number;
}

/** What later steps' templates see after a digest: the waiting run's variables first. */
export interface DigestValue {
  count: number;
  items: unknown[];
}

/** A run as stored. */
export interface RunRecord {
  id: string;
  tenant: string;
  workflowKey: string;
  version: number;
  recipientId: string;
  triggerId: string;
  status: RunStatus;
  stepIndex: number;
  priority: Priority;
  locale: string | null;
  variables: Record<string, unknown> | null;
  digest: DigestValue | null;
  steps: RunStepRecord[];
  /** When the engine takes it next; null once it has ended. */
  dueAt: number | null;
  createdAt: number;
  updatedAt: number;
  /** Its trigger's `traceparent`: the notifications its sends make store it (docs/tracing.md "Workflows"). */
  traceContext: string | null;
}

export interface RunFilter {
  workflow?: string;
  recipientId?: string;
  triggerId?: string;
  status?: RunStatus;
}

/** A notification a run made, as its `if` conditions and its view read it. */
export interface RunNotification {
  id: string;
  channel: string;
  status: Status;
  /** An `inapp` message of it was read. */
  read: boolean;
}

/**
 * The definitions runs follow: each workflow version by `definitionKey`, null for one that is gone
 * (its runs end FAILED); a run whose version is not in the map is left for the next step.
 */
export type Definitions = ReadonlyMap<string, WorkflowRecord | null>;
export const definitionKey = (tenant: string, workflowKey: string, version: number) =>
  `${tenant}\u0000${workflowKey}\u0000${version}`;

/** What one engine step did (one transaction). */
export interface AdvanceResult {
  /** Runs taken and moved on (or ended). */
  advanced: number;
  /** Notifications made by send steps; `urgent` when one of them is CRITICAL or HIGH. */
  made: number;
  urgent: boolean;
  /** Runs that entered each status in this step (/metrics); a topic trigger's new runs count as RUNNING. */
  entered: Partial<Record<RunStatus, number>>;
  /** Runs of the chunk whose definition was not in `definitions` (the engine loads them first). */
  missing: MissingDefinition[];
}

/** A workflow version the engine had not given the store (it loads it, then steps again). */
export interface MissingDefinition {
  tenant: string;
  workflowKey: string;
  version: number;
}

/** What a topic trigger's fan-out step did. */
export interface TriggerFanOutStep {
  triggerId: string;
  made: number;
  finished: boolean;
  /** The status its runs were stored in: RUNNING, or where the chunk took their first steps. */
  started: RunStatus;
  /** Set when the trigger's version was not in `definitions`: nothing was made. */
  missing?: MissingDefinition;
}

/**
 * Workflow runs (src/workflows/engine.ts, decision 0030). A run with work is a row in the due-time
 * index; `advance` takes the due ones in priority order, a bounded chunk in one transaction
 * (`FOR UPDATE SKIP LOCKED` on PostgreSQL), and commits each run's steps with what they made (a
 * notification, a digest join, a throttle mark) and the run's next state together: a crash loses
 * only an uncommitted chunk, which the next step redoes from the same rows.
 */
export interface WorkflowRunStore {
  /**
   * Stores a trigger and its runs (RUNNING, due at `scheduledAt` or now) in one transaction, or,
   * when its Idempotency-Key is live (made since `since`), stores nothing and returns that hit.
   * (`triggerMany` also stores runs at their `start`.)
   */
  trigger(trigger: NewTrigger, runs: NewRun[], since: number): Promise<TriggerHit | undefined>;
  /**
   * Stores several triggers, each as `trigger` would, in ONE transaction (one fsync): one result
   * per item, in order. A later item with the Idempotency-Key of an earlier one finds its row. If
   * any item fails, the transaction stores none of them.
   */
  triggerMany(items: TriggerItem[], since: number): Promise<Array<TriggerHit | undefined>>;
  /** The live trigger holding an Idempotency-Key, made since `since`. */
  findTrigger(tenant: string, idempotencyKey: string, since: number): Promise<TriggerHit | null>;
  get(tenant: string, id: string): Promise<RunRecord | null>;
  /** Newest first, below the run `before` (a seq from a previous page); `limit` rows at most. */
  list(
    tenant: string,
    filter: RunFilter,
    page: { limit: number; before?: number },
  ): Promise<Array<RunRecord & { seq: number }>>;
  /** The notifications of `ids` in the tenant (the run's own send steps). */
  notifications(tenant: string, recipientId: string, ids: readonly string[]): Promise<RunNotification[]>;
  /** Ends a run CANCELLED: null when there is none, 'ended' when it had ended already. */
  cancel(tenant: string, id: string, now: number): Promise<RunRecord | 'ended' | null>;
  /** The earliest due time of any run (one index entry per priority); null when none has work. */
  nextDue(): Promise<number | null>;
  /** One engine step: at most `chunk` due runs, highest priority first, each as far as it goes now. */
  advance(now: number, chunk: number, definitions: Definitions): Promise<AdvanceResult>;
  /** Whether a topic trigger has runs left to make (a cheap read). */
  hasFanOut(): Promise<boolean>;
  /**
   * Makes at most `chunk` runs of the topic trigger that waited longest, each taking its first
   * steps in the chunk's transaction when they ask nothing of it (`topicStart`); null: none free.
   * A trigger whose version is not in `definitions` makes none and names it (`missing`).
   */
  fanOut(now: number, chunk: number, definitions: Definitions): Promise<TriggerFanOutStep | null>;
  /**
   * Enters runs into the recipients' index (the list's `recipientId` filter) in bulk, oldest first,
   * sorted by recipient, in one transaction: at most `most`, and only once `most` wait or the newest
   * of them was made at or before `quietBefore` (the engine calls it each turn). Answers how many it
   * entered. SQLite stores a run without its entry, so a trigger's commit does not write a page a
   * recipient (`list` reads the runs not entered yet by `seq`); PostgreSQL enters each run at its
   * insert and answers 0 (docs/workflow-runs.md "The recipients' index").
   */
  indexRecipients(most: number, quietBefore: number): Promise<number>;
  /** Waiting runs by workflow key (/metrics: one grouped read of the waiting runs' index). */
  counts(): Promise<{ waitingByWorkflow: Record<string, number> }>;
}
