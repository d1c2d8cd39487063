import { type DeliveryReport, matchedProviders, reportKey } from '../../notifications/delivery-report.ts';
import { reportEffect, type ReportTarget as Target } from '../../notifications/status.ts';
import type { ReportOutcome, ReportStore } from '../port/reports.ts';
import { type PendingReportRow as PendingRow, reportFromPending } from '../rows.ts';
import type { Query, Sql } from './connect.ts';
import { addSuppressionsOn } from './suppressions.ts';

/**
 * Serialises a report and the worker's commit of the same message id. SQLite runs one writer at
 * a time; here, without this, a report could miss the notification (not committed yet) while the
 * worker's commit misses the pending report (not committed yet), and the report would wait forever.
 */
async function lockMessage(tx: Query, provider: string, messageId: string): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(hashtext(${provider}), hashtext(${messageId}))`;
}

async function findLocked(tx: Query, provider: string, messageId: string): Promise<Target | undefined> {
  const [a, b] = matchedProviders(provider);
  const [row] = await tx<
    Target[]
  >`SELECT seq, status, tenant, channel, recipient, address_key AS "addressKey" FROM notifications
    WHERE provider IN (${a}, ${b}) AND provider_message_id = ${messageId} FOR UPDATE`;
  return row;
}

/** Applies one report to a matched notification, by the rule in notifications/status.ts, once per key. */
async function applyTo(
  tx: Query,
  target: Target,
  report: DeliveryReport,
  now: number,
): Promise<ReportOutcome> {
  const { moveTo, event, suppress } = reportEffect(target, report);
  const added =
    await tx`INSERT INTO notification_events (notification_seq, type, at, provider, detail, source, report_key)
    VALUES (${target.seq}, ${event.type}, ${now}, ${report.provider}, ${event.detail}, ${report.source}, ${reportKey(report)})
    ON CONFLICT DO NOTHING`;
  if (added.count === 0) return 'duplicate';
  if (suppress) await addSuppressionsOn(tx, [suppress], now);
  if (moveTo)
    await tx`UPDATE notifications SET status = ${moveTo}, updated_at = ${now} WHERE seq = ${target.seq}`;
  else await tx`UPDATE notifications SET updated_at = ${now} WHERE seq = ${target.seq}`;
  return moveTo ? 'applied' : 'unchanged';
}

/**
 * Applies the pending reports for these ids inside the caller's transaction. The PostgreSQL
 * scheduler calls it in the transaction that records the ids, so there is no window between.
 */
async function applyPendingReportsIn(
  tx: Query,
  provider: string,
  providerMessageIds: readonly string[],
  now: number,
): Promise<number> {
  let applied = 0;
  // Sorted, so two transactions locking overlapping ids cannot deadlock.
  for (const messageId of [...new Set(providerMessageIds)].sort()) {
    await lockMessage(tx, provider, messageId);
    const rows = await tx<
      PendingRow[]
    >`SELECT id, outcome, detail, source, reported_at, report_key, suppress FROM pending_reports
      WHERE provider = ${provider} AND provider_message_id = ${messageId} ORDER BY reported_at, id`;
    for (const row of rows) {
      const target = await findLocked(tx, provider, messageId);
      if (!target) break;
      const report = reportFromPending(provider, messageId, row);
      await applyTo(tx, target, report, now);
      await tx`DELETE FROM pending_reports WHERE id = ${row.id}`;
      applied += 1;
    }
  }
  return applied;
}

/** The PostgreSQL implementation of the report port. */
export function createPostgresReports(sql: Sql): ReportStore {
  return {
    apply(report, now, mayKeep) {
      return sql.begin(async (tx): Promise<ReportOutcome> => {
        await lockMessage(tx, report.provider, report.providerMessageId);
        const target = await findLocked(tx, report.provider, report.providerMessageId);
        if (target) return applyTo(tx, target, report, now);
        if (!mayKeep) return 'dropped';
        const kept =
          await tx`INSERT INTO pending_reports (provider, provider_message_id, outcome, detail, source,
            reported_at, received_at, report_key, suppress)
          VALUES (${report.provider}, ${report.providerMessageId}, ${report.outcome}, ${report.detail ?? null},
                  ${report.source}, ${report.at}, ${now}, ${reportKey(report)}, ${report.suppress ?? null})
          ON CONFLICT DO NOTHING`;
        return kept.count > 0 ? 'pending' : 'duplicate';
      });
    },
    async pendingCount(provider) {
      const [row] = await sql<
        { n: number }[]
      >`SELECT count(*)::int AS n FROM pending_reports WHERE provider = ${provider}`;
      return row?.n ?? 0;
    },
    async useToken(provider, token, now, forgetBefore) {
      await sql`DELETE FROM webhook_tokens WHERE seen_at < ${forgetBefore}`;
      const added =
        await sql`INSERT INTO webhook_tokens (provider, token, seen_at) VALUES (${provider}, ${token}, ${now})
        ON CONFLICT DO NOTHING`;
      return added.count > 0;
    },
    async forgetToken(provider, token) {
      await sql`DELETE FROM webhook_tokens WHERE provider = ${provider} AND token = ${token}`;
    },
    applyPending(provider, providerMessageIds, now) {
      return sql.begin((tx) => applyPendingReportsIn(tx, provider, providerMessageIds, now));
    },
    async purgePending(before) {
      return (await sql`DELETE FROM pending_reports WHERE received_at < ${before}`).count;
    },
  };
}
