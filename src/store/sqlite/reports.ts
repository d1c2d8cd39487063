import { type DeliveryReport, matchedProviders, reportKey } from '../../notifications/delivery-report.ts';
import { reportEffect, type ReportTarget as Target } from '../../notifications/status.ts';
import type { ReportOutcome, ReportStore } from '../port/reports.ts';
import { type PendingReportRow as PendingRow, reportFromPending } from '../rows.ts';
import { preparedOnce, type SqliteDb } from './open.ts';
import { addSuppressionsSync } from './suppressions.ts';

/** The statements behind reports, prepared once per database. */
function prepare(db: SqliteDb) {
  return {
    find: db.prepare<[string, string, string], Target>(
      `SELECT seq, status, tenant, channel, recipient, address_key AS "addressKey" FROM notifications
       WHERE provider IN (?, ?) AND provider_message_id = ?`,
    ),
    move: db.prepare<[string, number, number]>(
      'UPDATE notifications SET status = ?, updated_at = ? WHERE seq = ?',
    ),
    touch: db.prepare<[number, number]>('UPDATE notifications SET updated_at = ? WHERE seq = ?'),
    // One event per report key: a repeated report inserts nothing (ON CONFLICT with the partial
    // unique index of migration 110).
    event: db.prepare<[number, string, number, string, string | null, string, string]>(
      `INSERT INTO notification_events (notification_seq, type, at, provider, detail, source, report_key)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    ),
    keep: db.prepare<[string, string, string, string | null, string, number, number, string, string | null]>(
      `INSERT INTO pending_reports (provider, provider_message_id, outcome, detail, source, reported_at, received_at, report_key, suppress)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    ),
    pending: db.prepare<[string, string], PendingRow>(
      `SELECT id, outcome, detail, source, reported_at, report_key, suppress FROM pending_reports
       WHERE provider = ? AND provider_message_id = ? ORDER BY reported_at, id`,
    ),
    count: db.prepare<[string], number>('SELECT count(*) FROM pending_reports WHERE provider = ?').pluck(),
    useToken: db.prepare<[string, string, number]>(
      'INSERT INTO webhook_tokens (provider, token, seen_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
    ),
    forgetTokens: db.prepare<[number]>('DELETE FROM webhook_tokens WHERE seen_at < ?'),
    forgetToken: db.prepare<[string, string]>('DELETE FROM webhook_tokens WHERE provider = ? AND token = ?'),
    forget: db.prepare<[number]>('DELETE FROM pending_reports WHERE id = ?'),
    purge: db.prepare<[number]>('DELETE FROM pending_reports WHERE received_at < ?'),
  };
}

type Statements = ReturnType<typeof prepare>;
const statements = preparedOnce(prepare);

/**
 * Applies one report to a matched notification, by the rule in notifications/status.ts, once per
 * key, with the suppression it asks for in the same transaction.
 */
function applyTo(
  db: SqliteDb,
  s: Statements,
  target: Target,
  report: DeliveryReport,
  now: number,
): ReportOutcome {
  const effect = reportEffect(target, report);
  const { type, detail } = effect.event;
  const added = s.event.run(target.seq, type, now, report.provider, detail, report.source, reportKey(report));
  if (added.changes === 0) return 'duplicate';
  if (effect.suppress) addSuppressionsSync(db, [effect.suppress], now);
  if (effect.moveTo) s.move.run(effect.moveTo, now, target.seq);
  else s.touch.run(now, target.seq);
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
  const names = matchedProviders(provider);
  for (const messageId of providerMessageIds) {
    const target = s.find.get(...names, messageId);
    if (!target) continue;
    for (const row of s.pending.all(provider, messageId)) {
      const report = reportFromPending(provider, messageId, row);
      // Re-read between reports: the first may have moved the status the second is judged by.
      const current = s.find.get(...names, messageId) ?? target;
      applyTo(db, s, current, report, now);
      s.forget.run(row.id);
      applied += 1;
    }
  }
  return applied;
}

/** The SQLite implementation of the report port. */
export function createSqliteReports(db: SqliteDb): ReportStore {
  const s = statements(db);
  const applyOne = db.transaction((report: DeliveryReport, now: number, mayKeep: boolean): ReportOutcome => {
    const target = s.find.get(...matchedProviders(report.provider), report.providerMessageId);
    if (target) return applyTo(db, s, target, report, now);
    if (!mayKeep) return 'dropped';
    const kept = s.keep.run(
      report.provider,
      report.providerMessageId,
      report.outcome,
      report.detail ?? null,
      report.source,
      report.at,
      now,
      reportKey(report),
      report.suppress ?? null,
    );
    return kept.changes > 0 ? 'pending' : 'duplicate';
  });
  const applyMany = db.transaction(applyPendingReportsSync);
  return {
    async apply(report, now, mayKeep) {
      return applyOne.immediate(report, now, mayKeep);
    },
    async pendingCount(provider) {
      return s.count.get(provider) as number;
    },
    async useToken(provider, token, now, forgetBefore) {
      s.forgetTokens.run(forgetBefore);
      return s.useToken.run(provider, token, now).changes > 0;
    },
    async forgetToken(provider, token) {
      s.forgetToken.run(provider, token);
    },
    async applyPending(provider, providerMessageIds, now) {
      return applyMany.immediate(db, provider, providerMessageIds, now);
    },
    async purgePending(before) {
      return s.purge.run(before).changes;
    },
  };
}
