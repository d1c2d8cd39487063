import pino from 'pino';
import { loggerOptions } from '../http/logger.ts';
import type { AppDeps } from '../http/types.ts';
import {
  configuredProviderFactories,
  createProviderRegistry,
  type ProviderRegistry,
} from '../providers/registry.ts';
import type { ProviderDeps, ReportSink } from '../providers/types.ts';
import { createRenderer } from '../templates/render.ts';
import { createStoreReportSink } from '../webhooks/report-sink.ts';
import { createScheduler } from './scheduler.ts';
import { createWorker, type Worker } from './worker.ts';

/** The worker role of one process: its providers, scheduler and loop. */
export interface Dispatch {
  worker: Worker;
  providers: ProviderRegistry;
  /** Graceful: stop claiming, finish or release in-flight sends, close providers. */
  close(): Promise<void>;
}

/**
 * Starts the worker role on the shared deps (store, clock, wake-up). `reports` receives
 * asynchronous delivery reports (SMPP receipts); by default they go to the store.
 */
export async function startDispatch(deps: AppDeps, reports?: ReportSink): Promise<Dispatch> {
  const log = pino(loggerOptions(deps.config.logLevel)).child({ role: 'worker' });
  const sink: ReportSink = reports ?? createStoreReportSink(deps.store, deps.clock);
  const providerDeps: ProviderDeps = { config: deps.config, clock: deps.clock, reports: sink, log };
  const providers = createProviderRegistry(providerDeps, await configuredProviderFactories(deps.config));
  const scheduler = createScheduler({
    store: deps.store,
    providers,
    renderer: createRenderer(deps.store),
    clock: deps.clock,
    config: deps.config.dispatch,
    log,
    metrics: deps.metrics,
  });
  const worker = createWorker({
    scheduler,
    wakeup: deps.wakeup,
    clock: deps.clock,
    pollMs: deps.config.dispatch.pollMs,
    log,
  });
  worker.start();
  log.info(
    { owner: scheduler.owner, providers: providers.all().map((p) => `${p.channel}:${p.name}`) },
    'worker started',
  );
  return {
    worker,
    providers,
    async close() {
      await worker.stop(Math.min(deps.config.dispatch.leaseMs, 10_000));
      await providers.close();
    },
  };
}
