import { setTimeout as sleep, setImmediate as yieldTurn } from 'node:timers/promises';
import type { Clock } from '../clock.ts';
import { FIXED } from '../config/schema.ts';
import { type UrgentWindow, watchUrgent } from '../dispatch/urgent-window.ts';
import type { Metrics } from '../metrics.ts';
import type { WakeSignal, Wakeup } from '../notifications/wakeup.ts';
import { type AdvanceResult, definitionKey, type WorkflowRunStore } from '../store/port/workflow-runs.ts';
import type { WorkflowStore } from '../store/port/workflows.ts';
import type { WorkflowRecord } from './model.ts';

/** The worker's workflow engine (docs/workflows.md "Runs", decision 0030). */
export interface WorkflowEngine {
  /** Stops taking steps; resolves once the step under way is committed or rolled back. */
  stop(): Promise<void>;
}

export interface WorkflowEngineDeps {
  runs: WorkflowRunStore;
  workflows: Pick<WorkflowStore, 'get'>;
  clock: Clock;
  /**
   * The worker's wake-up: told after a step that made notifications, so they are claimed at once;
   * its urgent notifies (a CRITICAL or HIGH committed) shorten the engine's turns (urgent-window.ts).
   */
  wakeup: Pick<Wakeup, 'notify' | 'onUrgent'>;
  /**
   * What an idle engine waits on besides the earliest due time: notified when a trigger committed
   * runs (in this process, or through PostgreSQL's NOTIFY from another), so they start at once.
   */
  triggered: Pick<Wakeup, 'wait'>;
  /** Told after each step that moved runs (their notifications are status changes too). */
  onAdvanced?: (result: AdvanceResult) => void;
  /** Counts runs by the status they enter (herald_workflow_runs_total). */
  metrics?: Pick<Metrics, 'workflowRuns'>;
  /** The longest an idle engine sleeps before it looks again (HERALD_POLL_MS). */
  pollMs: number;
  log: { error(obj: object, msg: string): void };
  /** Runs a step takes at most: FIXED.fanOutChunk for the store (one writer or not). */
  chunk: number;
}

/** The shortest idle sleep. */
const MIN_IDLE_MS = 5;

/** Definitions kept at most; versions never change, so a kept one is never stale. */
const KEPT_DEFINITIONS = 10_000;

/**
 * One turn of the engine: a chunk of a topic trigger's runs, then a chunk of due runs (the
 * versions either needs loaded first when the store names ones it has not been given), then a
 * chunk of runs entered into the recipients' index when enough wait or none came lately
 * (`FIXED.recipientsIndex`). Resolves with whether there is more to do now. Exported for tests, which turn it by hand on a manual clock.
 */
export function engineTurn(
  deps: Omit<WorkflowEngineDeps, 'pollMs' | 'log' | 'triggered' | 'wakeup'> & {
    wakeup: WakeSignal;
    /** Whether urgent work arrived lately: the turn then takes a shorter chunk (urgent-window.ts). */
    urgent?: Pick<UrgentWindow, 'chunk'>;
  },
): () => Promise<boolean> {
  const { runs, clock, chunk } = deps;
  const definitions = new Map<string, WorkflowRecord | null>();
  let fanning = false;

  async function load(missing: AdvanceResult['missing']): Promise<void> {
    if (definitions.size + missing.length > KEPT_DEFINITIONS) definitions.clear();
    for (const m of missing) {
      const key = definitionKey(m.tenant, m.workflowKey, m.version);
      if (!definitions.has(key))
        definitions.set(key, await deps.workflows.get(m.tenant, m.workflowKey, m.version));
    }
  }

  return async () => {
    const size = deps.urgent?.chunk(chunk) ?? chunk;
    if (fanning || (await runs.hasFanOut())) {
      const made = await runs.fanOut(clock.now(), size, definitions);
      fanning = made !== null && !made.finished;
      if (made?.missing) await load([made.missing]);
      if (made && made.made > 0) {
        deps.metrics?.workflowRuns.inc({ status: 'RUNNING' }, made.made);
        if (made.started !== 'RUNNING') deps.metrics?.workflowRuns.inc({ status: made.started }, made.made);
      }
    }
    const result = await runs.advance(clock.now(), size, definitions);
    if (result.made > 0) deps.wakeup.notify(result.urgent);
    if (result.advanced > 0) deps.onAdvanced?.(result);
    for (const [status, n] of Object.entries(result.entered)) deps.metrics?.workflowRuns.inc({ status }, n);
    const indexing = deps.urgent?.chunk(FIXED.recipientsIndex.chunk) ?? FIXED.recipientsIndex.chunk;
    const indexed = await runs.indexRecipients(indexing, clock.now() - FIXED.recipientsIndex.quietMs);
    if (result.missing.length > 0) {
      await load(result.missing);
      return true;
    }
    return fanning || result.advanced >= size || indexed >= indexing;
  };
}

/**
 * Runs workflows beside the worker's claim loop, as the broadcast fan-out does: one turn (one
 * transaction of at most `chunk` due runs, highest priority first) at a time, yielding the event
 * loop after each, so the claim cycle, the urgent lane and ingest on the same thread wait for one
 * chunk at most, never for a million runs falling due. Between turns that found work it goes on
 * at once; idle, it sleeps until the earliest due time (one index entry per priority) or a
 * trigger's wake-up, at most `pollMs` (the backstop for a lost hint).
 */
export function startWorkflowEngine(deps: WorkflowEngineDeps): WorkflowEngine {
  const { runs, clock, log } = deps;
  const urgent = watchUrgent(deps.wakeup, clock);
  const turn = engineTurn({ ...deps, urgent });
  const stopped = new AbortController();
  let running = true;

  const pause = (ms: number) => sleep(ms, undefined, { signal: stopped.signal }).catch(() => undefined);

  async function idle(): Promise<void> {
    const next = await runs.nextDue();
    // A due run another worker holds (PostgreSQL) is left to it: a few milliseconds, not a spin.
    const wait =
      next === null ? deps.pollMs : Math.min(deps.pollMs, Math.max(MIN_IDLE_MS, next - clock.now()));
    await deps.triggered.wait(wait, stopped.signal);
  }

  async function run(): Promise<void> {
    while (running) {
      try {
        if (await turn()) await yieldTurn();
        else await idle();
      } catch (error) {
        log.error({ err: error }, 'workflow engine step failed; retrying after the poll interval');
        await pause(deps.pollMs);
      }
    }
  }

  const loop = run();
  return {
    async stop() {
      running = false;
      stopped.abort();
      urgent.stop();
      await loop;
    },
  };
}
