import { atMostEvery } from '../at-most.ts';
import { startCallbackThread } from '../callbacks/threaded-sender.ts';
import { FIXED } from '../config/schema.ts';
import type { CoreDeps } from '../deps.ts';
import { createLogger } from '../http/logger.ts';
import type { Metrics } from '../metrics.ts';
import type { NotificationRecord } from '../notifications/model.ts';
import type { ReportSink } from '../notifications/reports.ts';
import type { Wakeup } from '../notifications/wakeup.ts';
import {
  configuredProviderFactories,
  createProviderRegistry,
  type ProviderRegistry,
} from '../providers/registry.ts';
import type { ProviderDeps } from '../providers/types.ts';
import { startFanOut } from '../recipients/fan-out.ts';
import { createPreferenceTokens, type PreferenceTokens } from '../recipients/preferences-token.ts';
import { suppressionKey } from '../suppressions/model.ts';
import { createUnsubscribeTokens, type UnsubscribeTokens } from '../suppressions/unsubscribe-token.ts';
import type { Renderer } from '../templates/render.ts';
import { startWorkflowEngine } from '../workflows/engine.ts';
import { createScheduler } from './scheduler.ts';
import { createUrgentTrace } from './urgent-trace.ts';
import { watchUrgent } from './urgent-window.ts';
import { createWorker, type Worker } from './worker.ts';

/** The worker role of one process: its providers, scheduler and loop. */
export interface Dispatch {
  worker: Worker;
  providers: ProviderRegistry;
  /**
   * Says that status changes were committed (the worker's own steps say it themselves; ingest in
   * the dispatch thread calls it for its QUEUED changes): the callback sender and the live
   * streams' reader look at the log at once instead of at their next poll.
   */
  statusChanged(): void;
  /** Graceful: stop claiming, finish or release in-flight sends, close providers. */
  close(): Promise<void>;
}

/**
 * The least time between two status-change hints: the first change after a quiet spell is told
 * at once, a busy worker's at most this often (the log is read in pages meanwhile).
 */
const STATUS_HINT_GAP_MS = 20;

/**
 * What the worker role is built from: the store, the wake-up ingest signals, and the reports
 * service that asynchronous delivery reports (SMPP receipts) go to.
 */
export type WorkerDeps = CoreDeps & {
  wakeup: Wakeup;
  /** Told when a trigger committed runs: the workflow engine's wake-up. */
  runsWakeup: Pick<Wakeup, 'wait'>;
  reports: ReportSink;
  renderer: Renderer;
  metrics?: Metrics;
  /** The process's unsubscribe tokens when the API shares this thread; else made here. */
  unsubscribe?: UnsubscribeTokens;
  /** The process's preferences links when the API shares this thread; else made here. */
  preferenceTokens?: PreferenceTokens;
  /**
   * Told when notifications' status changed (at most every STATUS_HINT_GAP_MS): the dispatch
   * thread tells the main thread's live streams.
   */
  onStatusChanged?: () => void;
};

/** The one-click unsubscribe link of a notification's recipient, under HERALD_PUBLIC_URL. */
function unsubscribeLinks(deps: WorkerDeps) {
  const tokens =
    deps.unsubscribe ?? createUnsubscribeTokens(deps.store.auth, deps.clock, deps.config.keyEncryptionSecret);
  return async (record: NotificationRecord) => {
    const recipient = suppressionKey(record.recipient) ?? '';
    // To a person: the link opts the person out of the email's category (docs/sending-to-people.md).
    const person = record.person && { id: record.person.id, category: record.category };
    const token = await tokens.make({ tenant: record.tenant, channel: record.channel, recipient, person });
    return `${deps.config.publicUrl}/unsubscribe/${token}`;
  };
}

/** A person's preferences page (`preferencesUrl`, docs/sending-to-people.md), under HERALD_PUBLIC_URL. */
function preferencesLinks(deps: WorkerDeps) {
  const tokens =
    deps.preferenceTokens ??
    createPreferenceTokens(deps.store.auth, deps.clock, deps.config.keyEncryptionSecret);
  return async (tenant: string, id: string) =>
    `${deps.config.publicUrl}/preferences/${await tokens.make({ tenant, id })}`;
}

/** Starts the worker role: its providers, scheduler and loop. */
export async function startDispatch(deps: WorkerDeps): Promise<Dispatch> {
  const log = createLogger(deps.config.logLevel, deps.config.logFormat).child({ role: 'worker' });
  const providerDeps: ProviderDeps = { config: deps.config, clock: deps.clock, reports: deps.reports, log };
  const providers = createProviderRegistry(providerDeps, await configuredProviderFactories(deps.config));
  // Status callbacks go out from the worker role too, in a thread of their own; their writes go
  // through this store (on SQLite the connection that already writes, so their bookkeeping never
  // waits on another connection's write lock).
  const callbacks = startCallbackThread({
    config: deps.config,
    callbacks: deps.store.callbacks,
    log: log.child({ part: 'callbacks' }),
  });
  const statusChanged = atMostEvery(STATUS_HINT_GAP_MS, () => {
    callbacks.changed();
    deps.onStatusChanged?.();
  });
  const { traceFile } = deps.config.dispatch;
  const trace = traceFile === undefined ? undefined : createUrgentTrace(traceFile);
  const stopHints = trace && deps.wakeup.onUrgent(() => trace.hinted());
  const { oneWriter } = deps.store.capabilities;
  const urgentWindow = oneWriter ? watchUrgent(deps.wakeup, deps.clock) : undefined;
  const scheduler = createScheduler({
    store: deps.store,
    providers,
    renderer: deps.renderer,
    clock: deps.clock,
    config: deps.config.dispatch,
    log,
    metrics: deps.metrics,
    unsubscribeUrl: unsubscribeLinks(deps),
    preferencesUrl: preferencesLinks(deps),
    onStatusChanged: statusChanged,
    trace,
    // Where the lane runs beside the step, on a connection of its own (PostgreSQL), a CRITICAL a
    // step claimed would wait for that step's bulk to commit: steps leave CRITICAL and HIGH to it.
    urgentInLane: !oneWriter,
    urgentWindow,
  });
  const worker = createWorker({
    scheduler,
    wakeup: deps.wakeup,
    clock: deps.clock,
    pollMs: deps.config.dispatch.pollMs,
    log,
  });
  worker.start();
  // The lane's connections open now, not at the first CRITICAL; its first claim cycle then takes
  // whatever CRITICAL or HIGH is already waiting (a restart's), and prepares its statements.
  if (!oneWriter) {
    deps.store.queue.openLanes?.().then(
      () => scheduler.claimUrgent(),
      (error: unknown) => log.warn({ err: error }, 'the urgent lane could not open its connections yet'),
    );
  }
  // Broadcasts fan out beside the claim loop, a chunk at a time (docs/topics.md).
  const fanOut = startFanOut({
    broadcasts: deps.store.broadcasts,
    clock: deps.clock,
    wakeup: deps.wakeup,
    onChanged: statusChanged,
    pollMs: deps.config.dispatch.pollMs,
    log,
    chunk: oneWriter ? FIXED.fanOutChunk.oneWriter : FIXED.fanOutChunk.sharedStore,
    oneWriter,
  });
  // Workflow runs step beside it too, a chunk of due runs at a time (docs/workflows.md "Runs").
  const engine = startWorkflowEngine({
    runs: deps.store.workflowRuns,
    workflows: deps.store.workflows,
    clock: deps.clock,
    wakeup: deps.wakeup,
    triggered: deps.runsWakeup,
    onAdvanced: () => statusChanged(),
    metrics: deps.metrics,
    pollMs: deps.config.dispatch.pollMs,
    log,
    chunk: oneWriter ? FIXED.fanOutChunk.oneWriter : FIXED.fanOutChunk.sharedStore,
  });
  log.info(
    { owner: scheduler.owner, providers: providers.all().map((p) => `${p.channel}:${p.name}`) },
    'worker started',
  );
  return {
    worker,
    providers,
    statusChanged,
    async close() {
      await fanOut.stop();
      await engine.stop();
      await worker.stop(Math.min(deps.config.dispatch.leaseMs, 10_000));
      await callbacks.close();
      await providers.close();
      stopHints?.();
      urgentWindow?.stop();
      await trace?.close();
    },
  };
}
