import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { systemClock } from '../clock.ts';
import type { Config } from '../config/config.ts';
import { createMetrics } from '../metrics.ts';
import { createReportService } from '../notifications/reports.ts';
import { nameOwnThread } from '../os-thread.ts';
import type { Rank } from '../reserve.ts';
import { createStore } from '../store/create.ts';
import { RenderError } from '../templates/render-error.ts';
import { openLine } from '../thread-calls.ts';
import { startTracing } from '../tracing/sdk.ts';
import { threadCommits } from './joined-inserts.ts';
import { buildWorkerRole } from './role.ts';
import type { DispatchMainCalls, DispatchThreadCalls, PreviewReply } from './thread.ts';

/**
 * The dispatch thread (thread.ts has the main thread's side): it opens its own store connection,
 * builds the worker role on it as main.ts would in one thread (role.ts), and serves the main
 * thread's calls. On SQLite its connection is the one that commits new notifications too (the
 * `insert` calls), so every frequent write of the process goes through one connection and never
 * waits on SQLite's busy handler.
 */
const port = parentPort;
if (!port) throw new Error('thread-entry.ts runs in a worker thread');
const { config } = workerData as { config: Config };
nameOwnThread('herald-dispatch');

// The modules above loaded while the main thread migrated the store; `open` says it is done.
// Calls that arrive before the role runs are served in their order once it does.
let open: () => void = () => undefined;
const built = new Promise<void>((resolve) => {
  open = resolve;
}).then(async () => {
  // This thread's own tracer provider (its process spans), when the OTEL_* variables ask for one.
  const tracing = await startTracing(config);
  const store = await createStore(config);
  const metrics = createMetrics({ processMetrics: false });
  const role = await buildWorkerRole({
    config,
    store,
    clock: systemClock,
    metrics,
    reports: createReportService(store, systemClock),
    // The main thread's live streams read the log when told (start.ts spaces the hints).
    onStatusChanged: () => main.tell('changed'),
  });
  await role.start();
  return { store, metrics, role, tracing };
});

// The role, for the commits; a thread that failed to build has answered `open` with why.
const roleOf = built.then(({ role }) => role);
roleOf.catch(() => undefined);
const commits = threadCommits(roleOf);

const main = openLine<DispatchMainCalls, DispatchThreadCalls>(
  port,
  {
    open() {
      open();
      return built.then(() => undefined);
    },
    /**
     * Commits this hand-over with those queued right behind it on the port (joined-inserts.ts),
     * in the poll phase that brought it: the worker's next step (queued behind setImmediate)
     * then claims these rows, rather than the step after it.
     */
    insert: commits.joined((role) => role.commit),
    /** Served alone, ahead of the `insert` hand-overs queued right before it (LineOptions.ahead). */
    insertUrgent: commits.alone((role) => role.commit),
    /** Workflow triggers' hand-overs, joined as `insert`'s (their runs' rows go with them). */
    trigger: commits.joined((role) => role.commitTriggers),
    wake() {
      // A thread that failed to build has answered `open` with why; a wake is then moot.
      built.then(
        ({ role }) => role.wakeup.notify(),
        () => undefined,
      );
    },
    wakeRuns() {
      built.then(
        ({ role }) => role.runsWakeup.notify(),
        () => undefined,
      );
    },
    async preview(template, variables): Promise<PreviewReply> {
      const { role } = await built;
      try {
        return { content: await role.renderer.preview(template, variables) };
      } catch (error) {
        if (!(error instanceof RenderError)) throw error;
        const { message, field, limit } = error;
        return { renderError: { message, field, limit } };
      }
    },
    check: async (tenant, rank, sources) =>
      (await built).role.renderer.checkSyntax(tenant, rank as Rank, sources),
    metrics: async () => (await built).metrics.registry.getMetricsAsJSON(),
    stop: async () => (await built).role.stop(),
    async close() {
      const { store, role, tracing } = await built;
      await role.close();
      await store.close();
      await tracing?.shutdown();
    },
  },
  { drain: () => receiveMessageOnPort(port), ahead: ['insertUrgent'] },
);
