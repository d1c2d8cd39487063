import type { DeliveryReport } from '../../notifications/reports.ts';
import { reportEffect, type ReportTarget as Target } from '../../notifications/status.ts';
import type { ReportOutcome, ReportStore } from '../port/reports.ts';
import { type PendingReportRow as PendingRow, reportFromPending } from '../rows.ts';
import type { SqliteDb } from './open.ts';

/** The statements behind reports, prepared once per database. */
function prepare(db: SqliteDb) {
  return {
    find: db.prepare<[string, string], Target>(
      'SELECT seq, status FROM notifications WHERE provider = ? AND provider_message_id = ?',
    ),
    move: db.prepare<[string, number, number]>(
      'UPDATE notifications SET status = ?, updated_at = ? WHERE seq = ?',
    ),
    touch: db.prepare<[number, number]>('UPDATE notifications SET updated_at = ? WHERE seq = ?'),
    event: db.prepare<[number, string, number, string, string | null, string]>(
      'INSERT INTO notification_events (notification_seq, type, at, provider, detail, source) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    keep: db.prepare<[string, string, string, string | null, string, number, number]>(
      `INSERT INTO pending_reports (provider, provider_message_id, outcome, detail, source, reported_at, received_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    pending: db.prepare<[string, string], PendingRow>(
      `SELECT id, outcome, detail, source, reported_at FROM pending_reports
       WHERE provider = ? AND provider_message_id = ? ORDER BY reported_at, id`,
    ),
    forget: db.prepare<[number]>('DELETE FROM pending_reports WHERE id = ?'),
    purge: db.prepare<[number]>('DELETE FROM pending_reports WHERE received_at < ?'),
  };
}

type Statements = ReturnType<typeof prepare>;
const cache = new WeakMap<SqliteDb, Statements>();

function statements(db: SqliteDb): Statements {
  let prepared = cache.get(db);
  if (!prepared) {
    prepared = prepare(db);
    cache.set(db, prepared);
  }
  return prepared;
}

/** Applies one report to a matched notification, by the rule in notifications/status.ts. */
function applyTo(s: Statements, target: Target, report: DeliveryReport, now: number): ReportOutcome {
  const effect = reportEffect(target, report);
  if (effect.moveTo) s.move.run(effect.moveTo, now, target.seq);
  else s.touch.run(now, target.seq);
  s.event.run(target.seq, effect.event.type, now, report.provider, effect.event.detail, report.source);
  return effect.moveTo ? 'applied' : 'unchanged';
}

/** Applies the pending reports for these ids, inside the transaction applyPending opens. */
function applyPendingReportsSync(
  db: SqliteDb,
  provider: string,
  providerMessageIds: readonly string[],
  now: number,
): number {
  const s = statements(db);
  let applied = 0;
  for (const messageId of providerMessageIds) {
    const target = s.find.get(provider, messageId);
    if (!target) continue;
    for (const row of s.pending.all(provider, messageId)) {
      const report = reportFromPending(provider, messageId, row);
      // Re-read between reports: the first may have moved the status the second is judged by.
      const current = s.find.get(provider, messageId) ?? target;
      applyTo(s, current, report, now);
      s.forget.run(row.id);
      applied += 1;
    }
  }
  return applied;
}

/** The SQLite implementation of the report port. */
export function createSqliteReports(db: SqliteDb): ReportStore {
  const s = statements(db);
  const applyOne = db.transaction((report: DeliveryReport, now: number): ReportOutcome => {
    const target = s.find.get(report.provider, report.providerMessageId);
    if (target) return applyTo(s, target, report, now);
    s.keep.run(
      report.provider,
      report.providerMessageId,
      report.outcome,
      report.detail ?? null,
      report.source,
      report.at,
      now,
    );
    return 'pending';
  });
  const applyMany = db.transaction(applyPendingReportsSync);
  return {
    async apply(report, now) {
      return applyOne(report, now);
    },
    async applyPending(provider, providerMessageIds, now) {
      return applyMany(db, provider, providerMessageIds, now);
    },
    async purgePending(before) {
      return s.purge.run(before).changes;
    },
  };
}
