/**
 * The tables that grow with traffic or with the number of accounts, on both databases: the
 * statement-plan tests (sqlite-plans.test.ts, postgres-plans.ts) fail on a statement that reads
 * one of them whole.
 */
export const GROWING_TABLES: readonly string[] = [
  'notifications',
  'notification_events',
  'sandbox_messages',
  'pending_reports',
  'auth_attempts',
  'login_failures',
  'callback_messages',
  'callback_attempts',
  'suppressions',
  'templates',
  'template_versions',
  'webhook_tokens',
  'user_identities',
  'users',
  'clients',
  'topics',
  'topic_subscribers',
  'broadcasts',
  'workflow_triggers',
  'workflow_runs',
  'workflow_digests',
  'workflow_throttle_marks',
];
