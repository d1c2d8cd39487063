import {
  AggregatorRegistry,
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from 'prom-client';

/**
 * Herald's Prometheus metrics, one registry per process (tests build several apps in one
 * process, so nothing is registered on prom-client's global registry).
 */
export interface Metrics {
  registry: Registry;
  /** The Prometheus text of this registry and of the peer's (the dispatch thread's), summed by name and labels. */
  exposition(): Promise<string>;
  /** Herald's own metrics (herald_*) of this process, its dispatch thread's included, as JSON. */
  heraldSnapshot(): Promise<MetricsSnapshot>;
  accepted: Counter<'channel' | 'priority'>;
  outcomes: Counter<'provider' | 'outcome'>;
  argon2: Counter;
  /** Seconds from acceptance to the provider call, by priority (the isolation bench's figure). */
  pickupLatency: Histogram<'priority'>;
  /** Workflow runs that entered each status (RUNNING when a trigger made them; docs/workflows.md). */
  workflowRuns: Counter<'status'>;
  /**
   * Per-tenant quotas (src/quotas/gate.ts), labelled only for tenants with a quota, so the
   * cardinality is the operator's choice: acceptances admitted, refused (by per-second or per-day
   * limit), and each daily limit's share used today.
   */
  quotaAccepted: Counter<'tenant'>;
  quotaRefused: Counter<'tenant' | 'limit'>;
  quotaUsage: Gauge<'tenant' | 'scope'>;
}

/**
 * How often the main thread's event-loop delay is sampled for `nodejs_eventloop_lag_*`, in ms:
 * each sample is a timer that wakes the loop. prom-client's default, 10 ms, woke an idle
 * `npm start` 100 times a second, about 11 ms of CPU a second doing nothing (#48, decision
 * 0038). Sampled ten times a second, a stall of 100 ms or more is still seen whole, and a
 * shorter one in part.
 */
export const LOOP_DELAY_SAMPLE_MS = 100;

/** A registry's metrics as JSON: what a thread sends its peer. */
export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[];

export interface MetricsOptions {
  /** The process's CPU, memory and event-loop metrics (off in a thread: the main thread reports them). */
  processMetrics?: boolean;
  /** Another thread's metrics, merged into `exposition()`. */
  peer?: () => Promise<MetricsSnapshot>;
  /** argon2 hashes and verifications this process ran (auth/passwords.ts counts them). */
  argon2Operations?: () => number;
  /** Waiting workflow runs by workflow key, read once per scrape (store.workflowRuns.counts). */
  waitingRuns?: () => Promise<Record<string, number>>;
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.processMetrics !== false)
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: LOOP_DELAY_SAMPLE_MS });
  if (options.waitingRuns) waitingGauge(registry, options.waitingRuns);
  const peer = options.peer;
  // Every counter and histogram exists in both threads (zero where unused): their sums are the process's.
  const merged = async () =>
    AggregatorRegistry.aggregate(
      [(await registry.getMetricsAsJSON()) as MetricsSnapshot].concat(peer ? [await peer()] : []),
    );
  return {
    registry,
    async exposition() {
      return peer ? (await merged()).metrics() : registry.metrics();
    },
    async heraldSnapshot() {
      const all = (await (await merged()).getMetricsAsJSON()) as MetricsSnapshot;
      return all.filter((metric) => metric.name.startsWith('herald_'));
    },
    accepted: new Counter({
      name: 'herald_notifications_accepted_total',
      help: 'Notifications durably accepted',
      labelNames: ['channel', 'priority'],
      registers: [registry],
    }),
    outcomes: new Counter({
      name: 'herald_delivery_outcomes_total',
      help: 'Provider call outcomes (sent, delivered, transient, permanent, config)',
      labelNames: ['provider', 'outcome'],
      registers: [registry],
    }),
    argon2: new Counter({
      name: 'herald_argon2_operations_total',
      help: 'argon2id hashes and verifications (logins, password changes; never client secrets)',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(options.argon2Operations?.() ?? 0);
      },
    }),
    pickupLatency: new Histogram({
      name: 'herald_pickup_latency_seconds',
      help: 'From acceptance to the provider call',
      labelNames: ['priority'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 60, 300, 1800],
      registers: [registry],
    }),
    workflowRuns: new Counter({
      name: 'herald_workflow_runs_total',
      help: 'Workflow runs that entered each status (RUNNING: made by a trigger)',
      labelNames: ['status'],
      registers: [registry],
    }),
    quotaAccepted: new Counter({
      name: 'herald_quota_accepted_total',
      help: 'Acceptances admitted by a tenant quota (tenants with a quota only)',
      labelNames: ['tenant'],
      registers: [registry],
    }),
    quotaRefused: new Counter({
      name: 'herald_quota_refused_total',
      help: 'Acceptances refused by a tenant quota (429 RATE_LIMITED), by the limit that refused them',
      labelNames: ['tenant', 'limit'],
      registers: [registry],
    }),
    quotaUsage: new Gauge({
      name: 'herald_quota_daily_usage_ratio',
      help: "Share of a tenant's daily limit (total or a channel's) used today, UTC",
      labelNames: ['tenant', 'scope'],
      // Every process reads the same shared count: merged, the highest, not the sum.
      aggregator: 'max',
      registers: [registry],
    }),
  };
}

/**
 * `herald_workflow_runs_waiting{workflow}`: one grouped read of the waiting runs' index per scrape,
 * made where the store is read (the main thread), not kept by the engine.
 */
function waitingGauge(registry: Registry, read: () => Promise<Record<string, number>>): void {
  new Gauge({
    name: 'herald_workflow_runs_waiting',
    help: 'Workflow runs waiting in a delay or a digest, by workflow',
    labelNames: ['workflow'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const [workflow, n] of Object.entries(await read())) this.set({ workflow }, n);
    },
  });
}
