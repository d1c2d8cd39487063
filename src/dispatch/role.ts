import type { Clock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import type { Metrics, MetricsSnapshot } from '../metrics.ts';
import type { CommitRows } from '../notifications/ingest.ts';
import type { ReportSink } from '../notifications/reports.ts';
import { createWakeup, isUrgent, type Wakeup } from '../notifications/wakeup.ts';
import type { PreferenceTokens } from '../recipients/preferences-token.ts';
import type { Store } from '../store/port/index.ts';
import type { WakeupChannel } from '../store/port/wakeups.ts';
import type { UnsubscribeTokens } from '../suppressions/unsubscribe-token.ts';
import { createRenderer, type Renderer } from '../templates/render.ts';
import { createRenderPool } from '../templates/render-pool.ts';
import type { CommitTriggers } from '../workflows/trigger-commit.ts';
import type { Dispatch } from './start.ts';

/**
 * The worker role as the rest of the process sees it, whether it runs here (buildWorkerRole) or
 * in the dispatch thread (thread.ts, whose entry builds it with the same function). main.ts
 * builds the API on it either way.
 */
export interface WorkerHandle {
  /**
   * Commits accepted rows on the worker's connection and wakes it; set where that connection is
   * in another thread and, on SQLite, the process's one writer (ingest hands its rows over).
   */
  insertMany?: CommitRows;
  /**
   * Commits workflow triggers on the worker's connection; set, as `insertMany`, where that
   * connection is in another thread (the triggers' group commit hands them over, then wakes the engine).
   */
  commitTriggers?: CommitTriggers;
  /**
   * Wakes the worker (a commit, a redrive, a resumed queue): `notify` reaches it wherever it runs;
   * `wait` is the in-process worker's (a dispatch thread's worker waits on its own).
   */
  wakeup: Wakeup;
  /**
   * Wakes the worker's workflow engine (a trigger committed runs), as `wakeup` wakes its claim
   * loop: `notify` reaches it wherever it runs; `wait` is the in-process engine's.
   */
  runsWakeup: Wakeup;
  /**
   * Hints that the worker's thread committed status changes (new notifications, a step's claims
   * and completions), so live streams read the log at once: set by the dispatch thread.
   */
  statusChanges?: WakeupChannel;
  /**
   * The process's one render pool, the worker's: previews (POST /templates/{key}/preview) share
   * its threads and its reserve with the sends.
   */
  renderer: Renderer;
  /** The worker's metrics where it counts into a registry of its own (a thread), for /metrics. */
  metrics?: () => Promise<MetricsSnapshot>;
  /**
   * Resolves once the role answers calls (the dispatch thread: once its worker runs; it rejects if
   * the thread could not start). The API listens after it.
   */
  ready: Promise<void>;
  /** Runs the worker's scheduler (the dispatch thread's runs from `ready` on). */
  start(): Promise<void>;
  /** Graceful stop of the worker: no more claims, in-flight sends finish or are released. */
  stop(): Promise<void>;
  /** Closes what the role opened (its render pool; a thread's store and the thread itself). */
  close(): Promise<void>;
}

/** What the worker role is built on, in whichever thread runs it. */
export interface WorkerRoleDeps {
  config: Config;
  store: Store;
  clock: Clock;
  metrics: Metrics;
  reports: ReportSink;
  /** The process's unsubscribe tokens when the API shares this thread; else made by the worker. */
  unsubscribe?: UnsubscribeTokens;
  /** The process's preferences links when the API shares this thread; else made by the worker. */
  preferenceTokens?: PreferenceTokens;
  /** Told when the worker committed status changes (the dispatch thread tells the main thread). */
  onStatusChanged?: () => void;
}

/** The worker role as built: its handle, and the commit a thread serves for ingest elsewhere. */
export interface WorkerRole extends WorkerHandle {
  /** Commits rows handed over by another thread, then wakes the worker and hints the change. */
  commit: CommitRows;
  /** Commits triggers handed over by another thread, then hints the change. */
  commitTriggers: CommitTriggers;
}

/**
 * Builds the worker role, once per process: its wake-up (fed by ingest here and, through the
 * database, by ingest in other processes), its render pool and, on `start()`, its providers,
 * scheduler and loop (dispatch/start.ts). Called by main.ts when the worker runs on the main
 * thread (or the process has no worker role: the API still renders previews and wakes nobody)
 * and by thread-entry.ts inside the dispatch thread.
 */
export async function buildWorkerRole(deps: WorkerRoleDeps): Promise<WorkerRole> {
  const { config, store } = deps;
  const wakeup = createWakeup();
  const runsWakeup = createWakeup();
  // Ingest and triggers in other processes wake this worker through the database (PostgreSQL
  // NOTIFY); the subscription ends with the store's connections.
  if (config.roles.includes('worker')) {
    await store.wakeups.subscribe((hint) =>
      hint === 'runs' ? runsWakeup.notify() : wakeup.notify(hint === 'urgent'),
    );
  }
  const renderer = createRenderer(
    store,
    createRenderPool({ threads: config.renderThreads, timeoutMs: config.renderTimeoutMs }),
  );
  let dispatch: Dispatch | undefined;
  return {
    wakeup,
    runsWakeup,
    renderer,
    ready: Promise.resolve(),
    async start() {
      // Loaded only here: the providers are the worker's alone (a main thread beside a dispatch
      // thread never loads them).
      const { startDispatch } = await import('./start.ts');
      dispatch = await startDispatch({ ...deps, wakeup, runsWakeup, renderer });
    },
    async commit(rows, since) {
      try {
        return await store.notifications.insertMany(rows, since);
      } finally {
        wakeup.notify(rows.some((row) => isUrgent(row.priority)));
        dispatch?.statusChanged(); // their QUEUED changes
      }
    },
    async commitTriggers(items, since) {
      try {
        return await store.workflowRuns.triggerMany(items, since);
      } finally {
        dispatch?.statusChanged(); // their runs' RUNNING changes
      }
    },
    stop: async () => dispatch?.close(),
    close: () => renderer.close(),
  };
}
