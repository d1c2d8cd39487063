// Taken unchanged from ../shared/peer-bench/peer/ (the peer).
// What the peer's API and its worker (and the bench's addBulk preload) share: the queue name,
// the Redis connection options, Herald's priorities mapped onto BullMQ priorities (lower runs
// first; 0, "no priority", would jump ahead of all of them, so it is not used), and the job
// options a production notification queue typically sets.
export const QUEUE = 'notifications';

export const PRIORITY = { CRITICAL: 1, HIGH: 2, NORMAL: 3, LOW: 4 };

export function redisConnection() {
  return {
    host: process.env.REDIS_HOST || '127.0.0.1',
    port: Number(process.env.REDIS_PORT || 6379),
    maxRetriesPerRequest: null, // what BullMQ asks for; the worker blocks on its connection
  };
}

/** Herald's retry defaults (8 attempts, first retry after 2 s), kept for a day like a status. */
export const JOB_OPTIONS = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 2000 },
  removeOnComplete: { age: 24 * 3600 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

/** Job options for one accepted body. */
export function jobOptions(body) {
  const opts = { priority: PRIORITY[body.priority] };
  if (body.scheduledAt) opts.delay = Math.max(0, Date.parse(body.scheduledAt) - Date.now());
  return opts;
}
