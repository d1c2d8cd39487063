import { canMove, type Status, TERMINAL_STATUSES } from '../notifications/model.ts';
import type { DeliveryReport } from '../notifications/reports.ts';

/** The notification a report was matched to (by provider and provider message id). */
export interface ReportTarget {
  seq: number;
  status: Status;
}

/** A `pending_reports` row: a report kept until its provider message id is recorded. */
export interface PendingReportRow {
  id: number;
  outcome: DeliveryReport['outcome'];
  detail: string | null;
  source: DeliveryReport['source'];
  reported_at: number;
}

/** What applying a report does: the status it moves to (or none) and the event it appends. */
export interface ReportEffect {
  moveTo: Status | null;
  event: { type: string; detail: string | null };
}

/**
 * The one rule both adapters apply. Only a SENT notification moves: a terminal one keeps its
 * status (a late or replayed report), and one the queue holds again (QUEUED, PROCESSING,
 * RETRYING) belongs to the scheduler, so a report about an earlier attempt is recorded as a
 * WEBHOOK event but does not race the worker's own status writes.
 */
export function reportEffect(target: ReportTarget, report: DeliveryReport): ReportEffect {
  const detail = report.detail ?? null;
  if (target.status === 'SENT' && canMove(target.status, report.outcome)) {
    return { moveTo: report.outcome, event: { type: report.outcome, detail } };
  }
  const why =
    TERMINAL_STATUSES.has(target.status) || target.status === 'SENT' ? '' : ' (attempt in progress)';
  return {
    moveTo: null,
    event: { type: 'WEBHOOK', detail: `${report.outcome} reported${why}${detail ? `: ${detail}` : ''}` },
  };
}

/** Turns a kept report back into the report it was. */
export function reportFromPending(
  provider: string,
  providerMessageId: string,
  row: PendingReportRow,
): DeliveryReport {
  return {
    provider,
    providerMessageId,
    outcome: row.outcome,
    at: row.reported_at,
    source: row.source,
    ...(row.detail === null ? {} : { detail: row.detail }),
  };
}
