import type { AuthStore } from './auth.ts';
import type { BroadcastStore } from './broadcasts.ts';
import type { CallbackStore } from './callbacks.ts';
import type { InboxStore } from './inbox.ts';
import type { LimitStore } from './limits.ts';
import type { NotificationStore } from './notifications.ts';
import type { OutcomeCountStore } from './outcome-counts.ts';
import type { ProcessMetricsStore } from './process-metrics.ts';
import type { QueueStore } from './queue.ts';
import type { QuotaStore } from './quotas.ts';
import type { CategoryStore, RecipientStore } from './recipients.ts';
import type { ReportStore } from './reports.ts';
import type { SandboxStore } from './sandbox.ts';
import type { StatusLogStore } from './status-log.ts';
import type { SuppressionStore } from './suppressions.ts';
import type { TemplateStore } from './templates.ts';
import type { TopicStore } from './topics.ts';
import type { WakeupChannel } from './wakeups.ts';
import type { WorkflowRunStore } from './workflow-runs.ts';
import type { WorkflowStore } from './workflows.ts';

/**
 * The storage port: what Herald needs from a database, split by area. Both adapters (sqlite/,
 * postgres/) implement it and pass the same conformance suite in test/store/. Every method is
 * async so that the PostgreSQL adapter fits the same shape as the synchronous SQLite one.
 */
export interface Store {
  /** Signing keys, tenants, users, clients, login failures (src/auth). */
  auth: AuthStore;
  /** Ingest, reads, cancel and redrive of notifications (src/notifications). */
  notifications: NotificationStore;
  /** Templates and their immutable versions (src/templates). */
  templates: TemplateStore;
  /** Provider rate-limit buckets and circuit states shared by every worker (src/dispatch). */
  limits: LimitStore;
  /** Cross-process wake-up hints (PostgreSQL LISTEN/NOTIFY; silent on SQLite). */
  wakeups: WakeupChannel;
  /** Provider delivery reports (webhooks, SMPP receipts) and the ones waiting for their message id (src/webhooks). */
  reports: ReportStore;
  /** The dispatch queue: claims, completions, leases, pauses (src/dispatch). */
  queue: QueueStore;
  /** Messages the sandbox providers delivered (GET /admin/sandbox). */
  sandbox: SandboxStore;
  /** Each process's latest metrics, for the deployment's dashboard (src/metrics-publisher.ts). */
  processMetrics: ProcessMetricsStore;
  /** Delivered, failed and skipped per channel and minute or hour, from every process (GET /admin/history). */
  outcomes: OutcomeCountStore;
  /** Every status change in commit order: live streams and the callback sender read it. */
  statusLog: StatusLogStore;
  /** Status callbacks: their places in the log, outbox of retries and attempts (src/callbacks). */
  callbacks: CallbackStore;
  /** Recipients each tenant no longer sends to, per channel (src/suppressions). */
  suppressions: SuppressionStore;
  /** Each tenant's recipients: profiles and preferences (src/recipients). */
  recipients: RecipientStore;
  /** Each tenant's declared categories (src/recipients). */
  categories: CategoryStore;
  /** Each tenant's topics and their subscribers (src/recipients). */
  topics: TopicStore;
  /** Broadcasts to a topic and their durable fan-out (src/recipients/fan-out.ts). */
  broadcasts: BroadcastStore;
  /** Each recipient's in-app inbox: the `inapp` messages and their marks (docs/inbox.md). */
  inbox: InboxStore;
  /** Workflow definitions and their immutable versions (src/workflows, docs/workflows.md). */
  workflows: WorkflowStore;
  /** Workflow runs: triggers, the due-time index and each step's transaction (src/workflows/engine.ts). */
  workflowRuns: WorkflowRunStore;
  /** Per-tenant quotas: limits, shared buckets and daily usage (src/quotas, docs/quotas.md). */
  quotas: QuotaStore;
  /**
   * Calls `onChange` soon after any process commits status changes (PostgreSQL LISTEN/NOTIFY);
   * on SQLite, readers poll. A hint only: the log is the truth.
   */
  statusChanges: WakeupChannel;
  /** Which database; for tests and diagnostics. Code outside src/store asks `capabilities`. */
  readonly kind: 'sqlite' | 'postgres';
  /** What the rest of Herald may rely on, so that no rule outside the store tests the dialect. */
  readonly capabilities: StoreCapabilities;
  /** Cheap liveness query for /ready. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** What a store offers the rest of Herald (kysely's way: capabilities, not `if dialect === …`). */
export interface StoreCapabilities {
  /**
   * Several processes share this store (PostgreSQL): provider limits, circuits and the
   * deployment's metrics are shared through it. Otherwise the one process owns them.
   */
  readonly sharedByProcesses: boolean;
  /**
   * Writers on different connections wait on one database-wide lock (SQLite): a process's
   * frequent writes (new notifications) go through the one connection that claims, and the
   * status changes it commits are announced by that connection's owner.
   */
  readonly oneWriter: boolean;
}
