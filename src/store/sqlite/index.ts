import type { Store } from '../port/index.ts';
import { createSqliteAuthStore } from './auth.ts';
import { createSqliteBroadcasts } from './broadcasts.ts';
import { createSqliteCallbacks } from './callbacks.ts';
import { createSqliteInbox } from './inbox.ts';
import { createSqliteLimits } from './limits.ts';
import { createSqliteNotifications } from './notifications.ts';
import { openSqlite, type SqliteDb } from './open.ts';
import { createSqliteOutcomeCounts } from './outcome-counts.ts';
import { createSqliteProcessMetrics } from './process-metrics.ts';
import { createSqliteQueue } from './queue.ts';
import { createSqliteQuotas } from './quotas.ts';
import { createSqliteCategories, createSqliteRecipients } from './recipients.ts';
import { createSqliteReports } from './reports.ts';
import { createSqliteSandbox } from './sandbox.ts';
import { createSqliteStatusLog } from './status-log.ts';
import { createSqliteSuppressions } from './suppressions.ts';
import { createSqliteTemplates } from './templates.ts';
import { createSqliteTopics } from './topics.ts';
import { createSqliteWorkflowRuns } from './workflow-runs.ts';
import { createSqliteWorkflows } from './workflows.ts';

const silent = { subscribe: async () => async () => undefined };

/** The embedded SQLite adapter: one file under the data directory, WAL, synchronous=FULL. */
export function createSqliteStore(dataDir: string, cacheMiB?: number): Store & { db: SqliteDb } {
  const db = openSqlite(dataDir, undefined, cacheMiB);
  const pingStatement = db.prepare('SELECT 1');
  return {
    kind: 'sqlite',
    capabilities: { sharedByProcesses: false, oneWriter: true },
    db,
    auth: createSqliteAuthStore(db),
    notifications: createSqliteNotifications(db),
    templates: createSqliteTemplates(db),
    reports: createSqliteReports(db),
    queue: createSqliteQueue(db),
    sandbox: createSqliteSandbox(db),
    limits: createSqliteLimits(db),
    processMetrics: createSqliteProcessMetrics(db),
    outcomes: createSqliteOutcomeCounts(db),
    statusLog: createSqliteStatusLog(db),
    callbacks: createSqliteCallbacks(db),
    suppressions: createSqliteSuppressions(db),
    recipients: createSqliteRecipients(db),
    categories: createSqliteCategories(db),
    topics: createSqliteTopics(db),
    broadcasts: createSqliteBroadcasts(db),
    inbox: createSqliteInbox(db),
    workflows: createSqliteWorkflows(db),
    workflowRuns: createSqliteWorkflowRuns(db),
    quotas: createSqliteQuotas(db),
    // One process: the in-process signal already wakes the worker, and status readers poll.
    wakeups: silent,
    statusChanges: silent,
    async ping() {
      pingStatement.get();
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
