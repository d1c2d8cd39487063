import { Worker } from 'node:worker_threads';
import type { Content } from '../channels.ts';
import type { Config } from '../config/config.ts';
import type { MetricsSnapshot } from '../metrics.ts';
import type { WakeSignal } from '../notifications/wakeup.ts';
import type { EncodedNotification, IdempotentHit } from '../store/port/notifications.ts';
import type { TemplateRecord } from '../store/port/templates.ts';
import type { WakeupChannel } from '../store/port/wakeups.ts';
import type { LiquidSource } from '../templates/fields.ts';
import type { Renderer } from '../templates/render.ts';
import { RenderError } from '../templates/render-error.ts';
import { type CallReply, createCalls } from '../thread-calls.ts';

/**
 * The worker role in a thread of its own (docs/dispatch.md, "Threads"). With `npm start` the
 * HTTP roles keep the main thread and the scheduler, its providers and (on SQLite) the one
 * writer of new notifications run here, on the second core. This module is the main thread's
 * side; thread-entry.ts is the thread's.
 */
export interface DispatchThread {
  /**
   * Commits accepted rows in the thread's transaction (SQLite: the thread's connection is the
   * one that writes notifications, so ingest and claims never wait on each other's lock). The
   * thread wakes its worker after the commit.
   */
  insertMany(rows: EncodedNotification[], since: number): Promise<Array<IdempotentHit | undefined>>;
  /** Wakes the thread's worker (a redrive, a resumed queue, a commit made here). */
  wakeup: WakeSignal;
  /**
   * Hints that the thread committed status changes (new notifications, a step's claims and
   * completions): on SQLite, the main thread's live streams read the log at once instead of at
   * their next poll. At most one hint each STATUS_HINT_GAP_MS (start.ts).
   */
  statusChanges: WakeupChannel;
  /**
   * The process's one render pool lives in the thread: previews (POST /templates/{key}/preview)
   * are rendered there too, so previews and sends share its threads and its reserve, as they
   * do in one thread, and so are the syntax checks of acceptance and template saves. Only
   * `preview` and `checkSyntax` are served; deliveries render inside the thread.
   */
  renderer: Renderer;
  /** The thread's metrics (sends, outcomes, pickup latency), for this process's /metrics. */
  metrics(): Promise<MetricsSnapshot>;
  /**
   * Lets the thread open its store connection: called once the main thread has migrated the
   * store. The thread loads its modules before, in parallel with the main thread's start-up.
   */
  open(): void;
  /**
   * Resolves once the thread's worker runs; rejects if the thread could not start. The handle is
   * usable before (messages wait for the thread), so the API is built while the thread loads.
   */
  started: Promise<void>;
  /** Graceful stop of the worker: no more claims, in-flight sends finish or are released. */
  stop(): Promise<void>;
  /** Closes the thread's store and ends the thread (after the API has committed its last rows). */
  close(): Promise<void>;
}

/** What the main thread asks the thread to do and answer (a CallReply, by id). */
type Call =
  | { type: 'insert'; rows: EncodedNotification[]; since: number }
  | { type: 'preview'; template: TemplateRecord; variables: Record<string, unknown> }
  | { type: 'check'; tenant: string; rank: number; sources: LiquidSource[] }
  | { type: 'metrics' }
  | { type: 'stop' }
  | { type: 'close' };
export type ThreadCall = Call & { id: number };
/** Everything the main thread posts: the calls, and `wake` and `open`, which are not answered. */
export type ThreadRequest = ThreadCall | { type: 'wake' } | { type: 'open' };

/** A preview's answer: the content, or the render error (a class does not cross threads). */
export type PreviewReply =
  | { content: Content }
  | { renderError: { message: string; field: string | undefined; limit: boolean } };

/** What the thread posts: `started` once, then one reply per request, and status-change hints. */
export type ThreadReply =
  | { type: 'started' }
  | { type: 'failed'; error: unknown }
  | { type: 'changed' }
  | CallReply;

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
 * Starts the thread; `started` resolves once its worker runs. `onExit` is told if the thread
 * ends after it started and before `close()` (a crash there): the process can no longer deliver,
 * and should stop.
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
  const calls = createCalls();
  const changeListeners = new Set<() => void>();
  let closing = false;
  let running = false;
  let ended: Error | undefined;
  let opened = false;

  const started = new Promise<void>((resolve, reject) => {
    worker.on('message', (message: ThreadReply) => {
      if (message.type === 'started') {
        running = true;
        resolve();
      } else if (message.type === 'failed') reject(message.error);
      else if (message.type === 'changed') for (const listener of changeListeners) listener();
      else calls.settle(message);
    });
    worker.on('error', reject);
    worker.on('exit', (code) => {
      const error = new Error(`the dispatch thread ended (exit code ${code})`);
      ended = error;
      reject(error);
      calls.failAll(error);
      if (running && !closing) onExit(error);
    });
  });
  // A thread that failed to start is ended here; the caller sees the error through `started`.
  started.catch(() => worker.terminate());

  const ask = <T>(request: Call): Promise<T> => {
    if (ended) return Promise.reject(ended);
    // Never opened (the main thread's own store failed): nothing to close but the thread.
    if (request.type === 'close' && !opened) return worker.terminate().then(() => undefined as T);
    return calls.call<T>((id) => worker.postMessage({ ...request, id } satisfies ThreadRequest));
  };

  return {
    insertMany: (rows, since) => ask({ type: 'insert', rows, since }),
    wakeup: { notify: () => worker.postMessage({ type: 'wake' } satisfies ThreadRequest) },
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
        const reply = await ask<PreviewReply>({ type: 'preview', template, variables });
        if ('content' in reply) return reply.content;
        const { message, field, limit } = reply.renderError;
        throw new RenderError(message, field, limit);
      },
      checkSyntax: (tenant, rank, sources) => ask({ type: 'check', tenant, rank, sources }),
      render: () => Promise.reject(new Error('deliveries are rendered in the dispatch thread')),
      close: async () => undefined,
    },
    open() {
      opened = true;
      worker.postMessage({ type: 'open' } satisfies ThreadRequest);
    },
    started,
    metrics: () => ask({ type: 'metrics' }),
    stop: () => ask({ type: 'stop' }),
    async close() {
      closing = true;
      if (ended) return;
      await ask({ type: 'close' });
      await worker.terminate();
    },
  };
}
