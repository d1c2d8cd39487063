/** One process's latest metrics, as it published them. */
export interface ProcessMetricsRow {
  processId: string;
  roles: string;
  updatedAt: number;
  /** prom-client's registry JSON (metrics.ts MetricsSnapshot), serialized. */
  snapshot: string;
}

/**
 * Each process's metrics, published every few seconds, so that any API process can show the
 * whole deployment's (the dashboard: deliveries happen in worker processes without a port).
 */
export interface ProcessMetricsStore {
  /** Replaces this process's row. */
  publish(row: ProcessMetricsRow): Promise<void>;
  /** The rows published at or after `since` (older ones are processes that stopped). */
  since(since: number): Promise<ProcessMetricsRow[]>;
  /** Drops this process's row (a graceful stop) and every row older than `before`. */
  remove(processId: string, before: number): Promise<void>;
}
