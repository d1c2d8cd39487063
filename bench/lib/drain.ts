import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type Api, outstanding, queues } from './api.ts';
import { progress } from './log.ts';

/** How a drain went, seen from GET /admin/queues. */
export interface Drain {
  /** Outstanding (waiting + in flight) at the first poll. */
  from: number;
  /** Outstanding at the last poll (0 when drained). */
  left: number;
  seconds: number;
  perSecond: number;
}

/**
 * Polls GET /admin/queues every second until nothing is waiting or in flight (or the timeout),
 * and rates the drain as what went out between the first and the last poll over that time.
 * Not more often: the queue view counts the backlog, which costs the server CPU at 200,000 rows.
 */
export async function watchDrain(api: Api, timeoutMs: number, label: string): Promise<Drain> {
  const started = performance.now();
  const from = outstanding(await queues(api));
  let left = from;
  let lastReport = started;
  while (left > 0 && performance.now() - started < timeoutMs) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    left = outstanding(await queues(api));
    if (performance.now() - lastReport > 5000) {
      lastReport = performance.now();
      progress(`${label}: ${left.toLocaleString('en-US')} left`);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  return { from, left, seconds, perSecond: (from - left) / seconds };
}

/** Deliveries per second from the store's own DELIVERED events (first to last), SQLite only. */
export function deliveredSpan(dataDir: string): { count: number; perSecond: number } | undefined {
  try {
    const db = new Database(join(dataDir, 'herald.db'), { readonly: true, fileMustExist: true });
    try {
      const row = db
        .prepare(
          "SELECT count(*) AS count, min(at) AS first, max(at) AS last FROM notification_events WHERE type = 'DELIVERED'",
        )
        .get() as { count: number; first: number | null; last: number | null };
      if (!row.count || row.first === null || row.last === null || row.last <= row.first) return undefined;
      return { count: row.count, perSecond: row.count / ((row.last - row.first) / 1000) };
    } finally {
      db.close();
    }
  } catch {
    return undefined;
  }
}
