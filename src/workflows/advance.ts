/**
 * What each step of a run does when the engine reaches it (docs/workflows.md "Runs", decision
 * 0030), or its trigger for a new run's first steps (`firstSteps`): the one home of the step
 * rules, written once for both databases. It is a generator: each thing it needs from the
 * database inside the step's transaction (a notification made, a digest opened or joined, a
 * throttle mark) is yielded as an `Op` and answered by the adapter's driver, synchronously in
 * SQLite's transaction, awaited in PostgreSQL's. Nothing here touches time or storage itself, so
 * the two drivers cannot disagree about a rule.
 */
import type {
  DigestValue,
  RunNotification,
  RunRecord,
  RunStart,
  RunStepRecord,
} from '../store/port/workflow-runs.ts';
import {
  type DigestStep,
  durationMs,
  type RunStatus,
  type SendStep,
  type ThrottleStep,
  type WorkflowRecord,
} from './model.ts';

/**
 * What the step rules ask of the transaction. No answer reads or writes `workflow_runs`: a
 * PostgreSQL turn moves its runs' rows in one statement after every run's steps are taken.
 */
export type Op =
  /** Makes the step's notification for the run's recipient; answers its id, or null when its template is gone. */
  | { op: 'send'; index: number; step: SendStep; category: string | null; variables: Record<string, unknown> }
  /** The run's own notifications of `ids` (an `if` condition). */
  | { op: 'notifications'; ids: string[] }
  /** Opens the digest (this run waits until `until`) or joins the open one; 'busy': one past its window is still open. */
  | { op: 'digest'; index: number; keyValue: string; until: number; item: unknown }
  /** Closes this run's digest: what gathered in it. */
  | { op: 'closeDigest'; index: number; keyValue: string }
  /** Counts the window's marks and adds this run's when it is under `limit`: whether it passes. */
  | { op: 'throttle'; index: number; keyValue: string; limit: number; windowMs: number };

export type OpAnswer =
  | string
  | null
  | RunNotification[]
  | 'opened'
  | 'joined'
  | 'busy'
  | DigestValue
  | boolean;

/** A run's state after the engine took it: written back in the same transaction. */
export interface RunState {
  status: RunStatus;
  stepIndex: number;
  steps: RunStepRecord[];
  digest: DigestValue | null;
  dueAt: number | null;
  /** Notifications made. */
  made: number;
}

/** How long a run waits before trying again a digest whose last window has not been closed yet. */
export const DIGEST_BUSY_RETRY_MS = 1000;

/** What the step rules read of a run: where it is and its variables. */
type RunAt = Pick<RunRecord, 'stepIndex' | 'steps' | 'digest' | 'variables'>;

/** The value of a digest's or throttle's `key` variable for this run ('' without a key). */
function keyValueOf(run: RunAt, key: string | undefined): string {
  if (key === undefined) return '';
  const value = run.variables?.[key];
  return value === undefined || value === null
    ? ''
    : typeof value === 'string'
      ? value
      : JSON.stringify(value);
}

/** Whether a send's `if` holds over the run's earlier notifications (docs/workflows.md "Steps"). */
export function conditionHolds(condition: SendStep['if'], sent: RunNotification[]): boolean {
  switch (condition) {
    case undefined:
      return true;
    case 'not_read':
      return !sent.some((n) => n.channel === 'inapp' && n.read);
    case 'not_delivered':
      return !sent.some((n) => n.status === 'DELIVERED');
    case 'failed':
      return sent.some((n) => n.status === 'FAILED' || n.status === 'SKIPPED');
  }
}

/**
 * Takes the run from where it is as far as it goes at `now`: through sends, conditions and
 * throttles, up to a delay or digest that makes it wait, or to its end. A run whose definition is
 * gone ends FAILED.
 */
export function* advanceRun(
  run: RunAt,
  definition: WorkflowRecord | undefined,
  now: number,
): Generator<Op, RunState, OpAnswer> {
  const steps = run.steps.map((s) => ({ ...s }));
  let digest = run.digest;
  let made = 0;
  const state = (status: RunStatus, stepIndex: number, dueAt: number | null): RunState => ({
    status,
    stepIndex,
    steps,
    digest,
    dueAt,
    made,
  });
  if (!definition) return state('FAILED', run.stepIndex, null);
  const defined = definition.steps;
  for (let i = run.stepIndex; ; i++) {
    const step = defined[i];
    if (step === undefined) return state('COMPLETED', i, null);
    const record = steps[i] ?? { status: 'PENDING' };
    steps[i] = record;
    switch (step.type) {
      case 'send': {
        if (step.if !== undefined) {
          const ids = steps
            .slice(0, i)
            .map((s) => s.notificationId)
            .filter((id): id is string => id !== undefined);
          const sent = ids.length === 0 ? [] : ((yield { op: 'notifications', ids }) as RunNotification[]);
          if (!conditionHolds(step.if, sent)) {
            Object.assign(record, { status: 'SKIPPED', at: now });
            continue;
          }
        }
        const variables = { ...(run.variables ?? {}), ...(digest ? { digest } : {}) };
        const id = (yield { op: 'send', index: i, step, category: definition.category, variables }) as
          | string
          | null;
        if (id === null) return state('FAILED', i, null);
        Object.assign(record, { status: 'DONE', notificationId: id, at: now });
        made++;
        continue;
      }
      case 'delay': {
        if (record.status === 'WAITING') {
          // Its due time was kept across restarts: it is over once the engine takes it.
          if ((record.until ?? 0) > now) return state('WAITING', i, record.until ?? now);
          record.status = 'DONE';
          continue;
        }
        const until = now + (durationMs(step.for) ?? 0);
        Object.assign(record, { status: 'WAITING', at: now, until });
        return state('WAITING', i, until);
      }
      case 'digest': {
        const done = yield* digestStep(run, step, i, record, now);
        if ('closed' in done) {
          digest = done.closed;
          continue;
        }
        return state(done.status, i, done.dueAt);
      }
      case 'throttle': {
        const passed = yield* throttleStep(run, step, i);
        Object.assign(record, { status: 'DONE', at: now });
        if (!passed) return state('THROTTLED', i, null);
        continue;
      }
    }
  }
}

/**
 * Where a new run of `definition` stands once its trigger took its first steps at `now`: as far
 * as the step rules go without asking the transaction anything (a delay, a `send` whose `if`
 * cannot hold before any notification), so the trigger stores each run once, in that state
 * (docs/workflow-runs.md "Triggers"). Null when the first step asks the transaction (a send, a
 * digest, a throttle): the run is stored RUNNING at its first step and the engine takes it. The
 * same for every run of a trigger (they share the definition, variables and time).
 */
export function firstSteps(
  definition: WorkflowRecord,
  variables: Record<string, unknown> | null,
  now: number,
): RunStart | null {
  const steps: RunStepRecord[] = definition.steps.map(() => ({ status: 'PENDING' }));
  const taken = advanceRun({ stepIndex: 0, steps, digest: null, variables }, definition, now);
  const first = taken.next();
  if (!first.done) return null;
  const { status, stepIndex, dueAt } = first.value;
  return { status, stepIndex, steps: first.value.steps, dueAt };
}

/**
 * A digest step: the first run opens the digest and waits; a later one within the window joins it
 * and ends DIGESTED; the waiting run, once its window is over, closes it and goes on with what
 * gathered.
 */
function* digestStep(
  run: RunAt,
  step: DigestStep,
  index: number,
  record: RunStepRecord,
  now: number,
): Generator<Op, { closed: DigestValue } | { status: RunStatus; dueAt: number | null }, OpAnswer> {
  const keyValue = keyValueOf(run, step.key);
  if (record.status === 'WAITING') {
    if ((record.until ?? 0) > now) return { status: 'WAITING', dueAt: record.until ?? now };
    const closed = (yield { op: 'closeDigest', index, keyValue }) as DigestValue;
    record.status = 'DONE';
    return { closed };
  }
  const until = now + (durationMs(step.for) ?? 0);
  const answer = (yield { op: 'digest', index, keyValue, until, item: run.variables ?? {} }) as
    | 'opened'
    | 'joined'
    | 'busy';
  // The last window's digest is still open (its run not yet taken): try again shortly, unchanged.
  if (answer === 'busy') return { status: 'RUNNING', dueAt: now + DIGEST_BUSY_RETRY_MS };
  if (answer === 'joined') {
    Object.assign(record, { status: 'DONE', at: now });
    return { status: 'DIGESTED', dueAt: null };
  }
  Object.assign(record, { status: 'WAITING', at: now, until });
  return { status: 'WAITING', dueAt: until };
}

/** A throttle step: whether the run passes (its mark is added in the same transaction). */
function* throttleStep(run: RunAt, step: ThrottleStep, index: number): Generator<Op, boolean, OpAnswer> {
  const keyValue = keyValueOf(run, step.key);
  const windowMs = durationMs(step.for) ?? 0;
  return (yield { op: 'throttle', index, keyValue, limit: step.limit, windowMs }) as boolean;
}
