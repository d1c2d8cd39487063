import { Worker } from 'node:worker_threads';
import type { Content } from '../channels.ts';
import type { Config } from '../config/config.ts';
import type { MetricsSnapshot } from '../metrics.ts';
import { createWakeup } from '../notifications/wakeup.ts';
import type { EncodedNotification, IdempotentHit } from '../store/port/notifications.ts';
import type { TemplateRecord } from '../store/port/templates.ts';
import type { TriggerHit, TriggerItem } from '../store/port/workflow-runs.ts';
import type { LiquidSource } from '../templates/fields.ts';
import type { SyntaxVerdict } from '../templates/render.ts';
import { RenderError } from '../templates/render-error.ts';
import { openLine } from '../thread-calls.ts';
import type { WorkerHandle } from './role.ts';

/**
 * The worker role in a thread of its own (docs/dispatch.md, "Threads"). With `npm start` the
 * HTTP roles keep the main thread and the scheduler, its providers and (on SQLite) the one
 * writer of new notifications run there, on the second core. This module is the main thread's
 * side; thread-entry.ts builds the role inside the thread (role.ts) and serves these calls.
 */
export interface DispatchThread extends WorkerHandle {
  insertMany: NonNullable<WorkerHandle['insertMany']>;
  commitTriggers: NonNullable<WorkerHandle['commitTriggers']>;
  /** At most one hint each STATUS_HINT_GAP_MS (start.ts). */
  statusChanges: NonNullable<WorkerHandle['statusChanges']>;
  metrics: NonNullable<WorkerHandle['metrics']>;
  /**
   * Lets the thread open its store connection: called once the main thread has migrated the
   * store. The thread loads its modules before, in parallel with the main thread's start-up.
   * The handle is usable before `ready` (calls wait for the thread), so the API is built meanwhile.
   */
  open(): void;
}

/** A preview's answer: the content, or the render error (a class does not cross threads). */
export type PreviewReply =
  | { content: Content }
  | { renderError: { message: string; field: string | undefined; limit: boolean } };

/** What the dispatch thread serves (thread-entry.ts). */
export interface DispatchThreadCalls {
  /** The main thread has migrated the store: open, build and start the role; answers once it runs. */
  open(): Promise<void>;
  /** Accepted rows handed over, committed joined with those queued behind them (joined-inserts.ts). */
  insert(rows: EncodedNotification[], since: number): Promise<Array<IdempotentHit | undefined>>;
  /**
   * Accepted CRITICAL and HIGH rows (ingest's urgent flush), committed alone and ahead of the
   * `insert` hand-overs queued right before them on the port (LineOptions.ahead).
   */
  insertUrgent(rows: EncodedNotification[], since: number): Promise<Array<IdempotentHit | undefined>>;
  /** Workflow triggers handed over by their group commit (trigger-commit.ts), committed in one transaction. */
  trigger(items: TriggerItem[], since: number): Promise<Array<TriggerHit | undefined>>;
  wake(): void;
  /** A trigger committed runs: wakes the workflow engine. */
  wakeRuns(): void;
  preview(template: TemplateRecord, variables: Record<string, unknown>): Promise<PreviewReply>;
  /** Liquid syntax checks of acceptance and template saves, in the thread's render pool. */
  check(tenant: string, rank: number, sources: LiquidSource[]): Promise<SyntaxVerdict[]>;
  metrics(): Promise<MetricsSnapshot>;
  stop(): Promise<void>;
  close(): Promise<void>;
}

/** What the main thread serves the dispatch thread: status-change hints. */
export interface DispatchMainCalls {
  changed(): void;
}

const ENTRY = new URL('./thread-entry.js', import.meta.url);

/** Whether this process runs its worker role in a thread: it does when it also serves HTTP. */
export function wantsDispatchThread(config: Config): boolean {
  const roles = new Set(config.roles);
  return config.dispatchThread && roles.has('worker') && (roles.has('api') || roles.has('auth'));
}

/**
 * A dispatch thread that ends on its own (an uncaught error there) leaves a process that accepts
 * notifications it can no longer commit or deliver: stop it, so that its supervisor restarts it.
 * What was accepted is in the database, and leases the thread held expire and are retried.
 */
export function stopOnThreadExit(error: Error): void {
  console.error(`Herald: ${error.message}; stopping`);
  process.exit(1);
}

/**
 * Starts the thread; `ready` resolves once its worker runs. `onExit` is told if the thread ends
 * after it started and before `close()` (a crash there): the process can no longer deliver, and
 * should stop.
 */
export function startDispatchThread(config: Config, onExit: (error: Error) => void): DispatchThread {
  const worker = new Worker(ENTRY, {
    workerData: { config },
    // A small young generation: the thread's objects are short-lived rows and completions, and
    // peak RSS with 1M queued fell from 385 to 339 MB with it (dispatch went no slower). 16 MiB
    // halved the thread's scavenges in the abuse bench but did not reliably lower CRITICAL p99
    // (8 to 26 ms across runs) and cost 13 to 17 MB of peak RSS, once past the 300 MB target
    // (docs/dispatch.md).
    resourceLimits: { maxYoungGenerationSizeMb: 8 },
  });
  const changeListeners = new Set<() => void>();
  const line = openLine<DispatchThreadCalls, DispatchMainCalls>(worker, {
    changed: () => {
      for (const listener of changeListeners) listener();
    },
  });
  let closing = false;
  let running = false;
  let ended: Error | undefined;
  let opened = false;

  let started: { resolve(): void; reject(error: unknown): void } | undefined;
  const ready = new Promise<void>((resolve, reject) => {
    started = { resolve, reject };
  });
  worker.on('error', (error) => started?.reject(error));
  worker.on('exit', (code) => {
    const error = new Error(`the dispatch thread ended (exit code ${code})`);
    ended = error;
    started?.reject(error);
    line.end(error);
    if (running && !closing) onExit(error);
  });
  // A thread that failed to start is ended here; the caller sees the error through `ready`.
  ready.then(
    () => {
      running = true;
    },
    () => worker.terminate(),
  );

  return {
    insertMany: (rows, since, urgent) => line.call(urgent ? 'insertUrgent' : 'insert', rows, since),
    commitTriggers: (items, since) => line.call('trigger', items, since),
    wakeup: { ...createWakeup(), notify: () => line.tell('wake') },
    runsWakeup: { ...createWakeup(), notify: () => line.tell('wakeRuns') },
    statusChanges: {
      async subscribe(onChange) {
        const listener = () => onChange();
        changeListeners.add(listener);
        return async () => {
          changeListeners.delete(listener);
        };
      },
    },
    renderer: {
      async preview(template, variables) {
        const reply = await line.call('preview', template, variables);
        if ('content' in reply) return reply.content;
        const { message, field, limit } = reply.renderError;
        throw new RenderError(message, field, limit);
      },
      checkSyntax: (tenant, rank, sources) => line.call('check', tenant, rank, sources),
      render: () => Promise.reject(new Error('deliveries are rendered in the dispatch thread')),
      close: async () => undefined,
    },
    metrics: () => line.call('metrics'),
    open() {
      opened = true;
      line.call('open').then(started?.resolve, started?.reject);
    },
    ready,
    start: () => ready,
    stop: () => line.call('stop'),
    async close() {
      closing = true;
      if (ended) return;
      // Never opened (the main thread's own store failed): nothing to close but the thread.
      if (opened) await line.call('close');
      await worker.terminate();
    },
  };
}
