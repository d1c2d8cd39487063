// Taken unchanged from ../shared/peer-bench/peer-pg/ (the PostgreSQL peer).
// What the PostgreSQL peer's API and worker (and the bench's addJobs preload) share: the task
// name, Herald's priorities mapped onto graphile-worker's `priority` (lower runs first; 1-4 as
// in the BullMQ peer), the job spec of one accepted body, and a logger that honours LOG_LEVEL.
import { Logger } from 'graphile-worker';

export const TASK = 'deliver';

export const PRIORITY = { CRITICAL: 1, HIGH: 2, NORMAL: 3, LOW: 4 };

/** Herald's retry limit. graphile-worker's backoff is its own: exp(min(attempt, 10)) seconds. */
export const MAX_ATTEMPTS = 8;

/** addJob / addJobs spec for one accepted body. */
export function jobSpec(body) {
  return {
    priority: PRIORITY[body.priority],
    maxAttempts: MAX_ATTEMPTS,
    ...(body.scheduledAt ? { runAt: new Date(body.scheduledAt) } : {}),
  };
}

const LEVELS = ['debug', 'info', 'warning', 'error'];
const named = { warn: 'warning', fatal: 'error', trace: 'debug' };

/** graphile-worker's Logger writing to stderr from LOG_LEVEL (pino names: debug, info, warn, error) up. */
export function makeLogger(level = process.env.LOG_LEVEL || 'warn') {
  const min = Math.max(0, LEVELS.indexOf(named[level] ?? level));
  return new Logger((scope) => (lvl, message) => {
    if (LEVELS.indexOf(lvl) < min) return;
    process.stderr.write(`[${scope.label || 'core'}] ${lvl.toUpperCase()}: ${message}\n`);
  });
}
