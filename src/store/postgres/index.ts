import type { Store } from '../port/index.ts';
import { createPostgresAuthStore } from './auth.ts';
import { createPostgresBroadcasts } from './broadcasts.ts';
import { createPostgresCallbacks } from './callbacks.ts';
import { type ConnectOptions, connectPostgres, type Sql } from './connect.ts';
import { createPostgresInbox } from './inbox.ts';
import { createPostgresLimits } from './limits.ts';
import { migratePostgres } from './migrate.ts';
import { createPostgresNotifications } from './notifications.ts';
import { createPostgresOutcomeCounts } from './outcome-counts.ts';
import { createPostgresProcessMetrics } from './process-metrics.ts';
import { createPostgresQueue, type UrgentPart } from './queue.ts';
import { createPostgresQuotas } from './quotas.ts';
import { createPostgresCategories, createPostgresRecipients } from './recipients.ts';
import { createPostgresReports } from './reports.ts';
import { createPostgresSandbox } from './sandbox.ts';
import { createPostgresStatusLog } from './status-log.ts';
import { createPostgresSuppressions } from './suppressions.ts';
import { createPostgresTemplates } from './templates.ts';
import { createPostgresTopics } from './topics.ts';
import { createPostgresWakeups, STATUS_CHANNEL, WAKEUP_CHANNEL } from './wakeups.ts';
import { createPostgresWorkflowRuns } from './workflow-runs.ts';
import { createPostgresWorkflows } from './workflows.ts';

/**
 * The PostgreSQL adapter: the shared database of a scaled-out Herald. Every area's state lives
 * in it (queue, rate limits, breakers, pauses, keys, sandbox) so processes keep nothing another
 * one needs. Opens the pool and applies pending migrations before returning.
 */
export async function createPostgresStore(
  url: string,
  options: ConnectOptions = {},
): Promise<Store & { sql: Sql }> {
  const sql = connectPostgres(url, options);
  // The urgent lane's connections (queue.ts), one for its claims and one for its completions:
  // each opened at its first cycle, kept open, its own.
  const lanes: Partial<Record<UrgentPart, Sql>> = {};
  const urgentSql = (part: UrgentPart) => {
    lanes[part] ??= connectPostgres(url, {
      ...options,
      max: 1,
      idleTimeout: 0,
      applicationName: `${options.applicationName ?? 'herald'} urgent ${part}`,
      asyncCommit: true,
    });
    return lanes[part];
  };
  try {
    await migratePostgres(sql);
  } catch (error) {
    await sql.end({ timeout: 1 });
    throw error;
  }
  return {
    kind: 'postgres',
    capabilities: { sharedByProcesses: true, oneWriter: false },
    sql,
    auth: createPostgresAuthStore(sql),
    notifications: createPostgresNotifications(sql),
    templates: createPostgresTemplates(sql),
    reports: createPostgresReports(sql),
    queue: createPostgresQueue(sql, urgentSql),
    sandbox: createPostgresSandbox(sql),
    limits: createPostgresLimits(sql),
    processMetrics: createPostgresProcessMetrics(sql),
    outcomes: createPostgresOutcomeCounts(sql),
    statusLog: createPostgresStatusLog(sql),
    callbacks: createPostgresCallbacks(sql),
    suppressions: createPostgresSuppressions(sql),
    recipients: createPostgresRecipients(sql),
    categories: createPostgresCategories(sql),
    topics: createPostgresTopics(sql),
    broadcasts: createPostgresBroadcasts(sql),
    inbox: createPostgresInbox(sql),
    workflows: createPostgresWorkflows(sql),
    workflowRuns: createPostgresWorkflowRuns(sql),
    quotas: createPostgresQuotas(sql),
    wakeups: createPostgresWakeups(sql, WAKEUP_CHANNEL),
    statusChanges: createPostgresWakeups(sql, STATUS_CHANNEL),
    async ping() {
      await sql`SELECT 1`;
    },
    async close() {
      await Promise.all([
        sql.end({ timeout: 5 }),
        ...Object.values(lanes).map((lane) => lane.end({ timeout: 5 })),
      ]);
    },
  };
}
