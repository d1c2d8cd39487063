import { join } from 'node:path';
import Database from 'better-sqlite3';

/** The outcome of the priority-order check. */
export interface OrderCheck {
  /** CRITICALs claimed after a LOW that was accepted later than them. */
  violations: number;
  /** LOWs accepted after the first CRITICAL, and how many of those were claimed. */
  laterLow: number;
  laterLowProcessed: number;
}

/**
 * Checks "no CRITICAL is processed after a LOW that was accepted later" from the store itself:
 * acceptance order is `seq`, processing order is the id of the first PROCESSING event (ids
 * grow in commit order, finer than millisecond timestamps). Reads the SQLite file read-only
 * while Herald runs (WAL allows it), using the tables of migration 001 (the queue contract).
 */
export function checkOrder(dataDir: string, criticalIds: readonly string[]): OrderCheck {
  const db = new Database(join(dataDir, 'herald.db'), { readonly: true, fileMustExist: true });
  try {
    const seqOf = db.prepare('SELECT seq FROM notifications WHERE id = ?').pluck();
    const seqs = criticalIds.map((id) => seqOf.get(id) as number | undefined).filter((s) => s !== undefined);
    if (seqs.length === 0) return { violations: 0, laterLow: 0, laterLowProcessed: 0 };
    const first = Math.min(...seqs);
    const rows = db
      .prepare(
        `SELECT n.seq AS seq, n.priority AS priority,
           (SELECT min(e.id) FROM notification_events e
             WHERE e.notification_seq = n.seq AND e.type = 'PROCESSING') AS event
         FROM notifications n WHERE n.seq >= ? AND n.priority IN (0, 3) ORDER BY n.seq`,
      )
      .all(first) as Array<{ seq: number; priority: number; event: number | null }>;
    // Walk from the newest acceptance back: for each CRITICAL, the earliest claim among LOWs
    // accepted after it. A CRITICAL claimed later than that (or never) is a violation.
    let earliestLaterLow = Number.POSITIVE_INFINITY;
    let violations = 0;
    let laterLow = 0;
    let laterLowProcessed = 0;
    for (let i = rows.length - 1; i >= 0; i--) {
      const row = rows[i] as (typeof rows)[number];
      if (row.priority === 3) {
        laterLow++;
        if (row.event !== null) {
          laterLowProcessed++;
          earliestLaterLow = Math.min(earliestLaterLow, row.event);
        }
      } else if ((row.event ?? Number.POSITIVE_INFINITY) > earliestLaterLow) {
        violations++;
      }
    }
    return { violations, laterLow, laterLowProcessed };
  } finally {
    db.close();
  }
}
