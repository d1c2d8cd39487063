import { join } from 'node:path';
import Database from 'better-sqlite3';
import postgres from 'postgres';
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

const SPAN_SQL =
  "SELECT count(*) AS count, min(at) AS first, max(at) AS last FROM notification_events WHERE type = 'DELIVERED'";

type SpanRow = { count: number | string; first: number | string | null; last: number | string | null };

function toSpan(row: SpanRow | undefined): { count: number; perSecond: number } | undefined {
  const count = Number(row?.count);
  const first = Number(row?.first);
  const last = Number(row?.last);
  if (!count || !Number.isFinite(first) || !Number.isFinite(last) || last <= first) return undefined;
  return { count, perSecond: count / ((last - first) / 1000) };
}

/**
 * Deliveries per second from the store's own DELIVERED events, first to last: exact, and
 * independent of how often the queue view was polled. Reads SQLite read-only, or PostgreSQL.
 */
export async function deliveredSpan(
  where: { dataDir: string } | { databaseUrl: string },
): Promise<{ count: number; perSecond: number } | undefined> {
  try {
    if ('databaseUrl' in where) {
      const sql = postgres(where.databaseUrl, { max: 1, onnotice: () => undefined });
      try {
        return toSpan((await sql.unsafe(SPAN_SQL))[0] as SpanRow | undefined);
      } finally {
        await sql.end();
      }
    }
    const db = new Database(join(where.dataDir, 'herald.db'), { readonly: true, fileMustExist: true });
    try {
      return toSpan(db.prepare(SPAN_SQL).get() as SpanRow);
    } finally {
      db.close();
    }
  } catch {
    return undefined;
  }
}
