import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { AggregatorRegistry } from 'prom-client';
import type { Clock } from './clock.ts';
import type { Metrics, MetricsSnapshot } from './metrics.ts';
import type { Store } from './store/port/index.ts';

/** How often each process publishes its metrics. */
const PUBLISH_MS = 2000;
/** A row older than this is a process that stopped without saying so (a crash, kill -9). */
const STALE_MS = 15_000;

/**
 * Publishes this process's Herald metrics to the store every 2 s (one row per process), so that
 * any API process can show what the whole deployment does: in scale-out, deliveries happen in
 * worker processes that serve no port (GET /metrics/cluster, the dashboard). Best effort: a
 * failed publish is retried at the next tick, and the row of a process gone for 15 s is ignored.
 * On SQLite there is one process (the embedded store is not shared), so nothing is published: a
 * write every 2 s from the main thread would only contend with the dispatch thread's writes.
 */
export function startMetricsPublisher(
  deps: { store: Store; metrics: Metrics; clock: Clock },
  roles: readonly string[],
): { close(): Promise<void> } {
  if (!deps.store.capabilities.sharedByProcesses) return { close: async () => undefined };
  const processId = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  let closed = false;
  const publish = async () => {
    try {
      const snapshot = JSON.stringify(await deps.metrics.heraldSnapshot());
      if (closed) return;
      await deps.store.processMetrics.publish({
        processId,
        roles: roles.join(','),
        updatedAt: deps.clock.now(),
        snapshot,
      });
    } catch {
      // The store is briefly unreachable or closing: the next tick publishes again.
    }
  };
  void publish();
  const timer = setInterval(publish, PUBLISH_MS);
  timer.unref();
  return {
    async close() {
      closed = true;
      clearInterval(timer);
      await deps.store.processMetrics.remove(processId, deps.clock.now() - STALE_MS).catch(() => undefined);
    },
  };
}

/** The Herald metrics of every live process, summed by name and labels (Prometheus text). */
export async function clusterExposition(deps: {
  store: Store;
  metrics: Metrics;
  clock: Clock;
}): Promise<string> {
  if (!deps.store.capabilities.sharedByProcesses)
    return AggregatorRegistry.aggregate([await deps.metrics.heraldSnapshot()]).metrics();
  const rows = await deps.store.processMetrics.since(deps.clock.now() - STALE_MS);
  const snapshots = rows.map((row) => JSON.parse(row.snapshot) as MetricsSnapshot);
  if (snapshots.length === 0) return '';
  return AggregatorRegistry.aggregate(snapshots).metrics();
}
