/**
 * Workflows (docs/workflows.md): the steps of a definition, a stored version, and
 * the run and step status names. One home for each, shared by the definitions' routes, the store,
 * the run engine and the web UI.
 */
import type { Channel, Content } from '../channels.ts';

/**
 * What a workflow key may be: a template key's form (templates/key.ts), written apart so that a
 * 400 says "workflow key".
 */
export const WORKFLOW_KEY = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

/** Most steps one workflow may have. */
export const MAX_STEPS = 20;

/** The kinds of step, in the order docs/workflows.md describes them. */
export const STEP_TYPES = ['send', 'delay', 'digest', 'throttle'] as const;
export type StepType = (typeof STEP_TYPES)[number];

/**
 * When a `send` step runs, evaluated as the run reaches it: `not_read` (no in-app message sent
 * earlier in this run was read), `not_delivered` (none of its notifications is DELIVERED),
 * `failed` (one of them ended FAILED or SKIPPED). When it does not hold the step is SKIPPED.
 */
export const SEND_CONDITIONS = ['not_read', 'not_delivered', 'failed'] as const;
export type SendCondition = (typeof SEND_CONDITIONS)[number];

/** A notification to the run's recipient: a template's key (of this channel) or inline content. */
export interface SendStep {
  type: 'send';
  channel: Channel;
  template?: string;
  content?: Content;
  if?: SendCondition;
}

/** Waits `for` (an ISO 8601 duration, see durationMs). */
export interface DelayStep {
  type: 'delay';
  for: string;
}

/**
 * The first run for a recipient (and `key`'s variable) waits `for`; later ones within it join it
 * and end DIGESTED.
 */
export interface DigestStep {
  type: 'digest';
  for: string;
  key?: string;
}

/** At most `limit` runs per recipient (and `key`'s variable) pass in any window of `for`. */
export interface ThrottleStep {
  type: 'throttle';
  limit: number;
  for: string;
  key?: string;
}

export type WorkflowStep = SendStep | DelayStep | DigestStep | ThrottleStep;

/** What a PUT saves as a version (checked by validate.ts first). */
export interface WorkflowDefinition {
  name: string | null;
  /** The category of the workflow's notifications (docs/preferences.md), or null. */
  category: string | null;
  steps: WorkflowStep[];
}

/** One immutable version of a workflow. Times are epoch milliseconds (ISO in the API's view). */
export interface WorkflowRecord extends WorkflowDefinition {
  key: string;
  version: number;
  /** When the key was first saved (since its last delete); for a version read by number, when it was saved. */
  createdAt: number;
  /** When this version was saved. */
  updatedAt: number;
}

/**
 * What a digest's or throttle's `key` may be: the name of one of the trigger's variables, whose
 * value splits the digest or window (e.g. `projectId`).
 */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** A run's status: WAITING in a delay or a digest; the last four are final. */
export const RUN_STATUSES = [
  'RUNNING',
  'WAITING',
  'COMPLETED',
  'DIGESTED',
  'THROTTLED',
  'CANCELLED',
  'FAILED',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** The statuses a run never leaves (a cancel of one is 409). */
export const FINAL_RUN_STATUSES: ReadonlySet<RunStatus> = new Set([
  'COMPLETED',
  'DIGESTED',
  'THROTTLED',
  'CANCELLED',
  'FAILED',
]);

/** A step's status in a run: SKIPPED is an `if` that did not hold, or a send that ended SKIPPED. */
export const STEP_STATUSES = ['PENDING', 'WAITING', 'DONE', 'SKIPPED'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

/** The longest a delay, digest window or throttle window may be: 30 days. */
export const MAX_DURATION_MS = 30 * 24 * 3_600_000;

/**
 * The subset of ISO 8601 durations a step takes: weeks alone (`P2W`), or days and a time part
 * (`P1DT2H30M`, `PT10M`, `PT0.5S`). Years and months are refused, since their length depends on
 * the calendar; so are signs, commas and a fraction anywhere but the seconds. Upper case only.
 */
const DURATION =
  /^P(?:(\d{1,6})W|(?:(\d{1,6})D)?(?:T(?:(\d{1,6})H)?(?:(\d{1,6})M)?(?:(\d{1,6}(?:\.\d{1,3})?)S)?)?)$/;

/** What the duration pattern means, for a 400's message. */
export const DURATION_MESSAGE =
  'must be an ISO 8601 duration of weeks (P2W) or days, hours, minutes and seconds (P1DT2H, PT10M, PT30S), more than 0 and at most 30 days';

/**
 * The milliseconds of an ISO 8601 duration (the subset above), or undefined when `iso` is not
 * one or is outside (0, 30 days].
 */
export function durationMs(iso: string): number | undefined {
  const match = DURATION.exec(iso);
  // "P" and "P1DT" match the pattern with no number, or a "T" with nothing after it: not durations.
  if (!match || iso === 'P' || iso.endsWith('T')) return undefined;
  const [, weeks, days, hours, minutes, seconds] = match;
  const ms =
    Number(weeks ?? 0) * 7 * 86_400_000 +
    Number(days ?? 0) * 86_400_000 +
    Number(hours ?? 0) * 3_600_000 +
    Number(minutes ?? 0) * 60_000 +
    Math.round(Number(seconds ?? 0) * 1000);
  return ms > 0 && ms <= MAX_DURATION_MS ? ms : undefined;
}
