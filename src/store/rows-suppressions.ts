import type { Channel } from '../notifications/model.ts';
import {
  SUPPRESSION_REASONS,
  type SuppressionReason,
  type SuppressionRecord,
} from '../suppressions/model.ts';

/** A suppressions row as both adapters select it. */
export interface SuppressionRow {
  id: number | string;
  tenant: string;
  channel: string;
  recipient: string;
  reason: string;
  created_at: number | string;
}

/** The columns SuppressionRow reads, for both adapters' SELECTs. */
export const SUPPRESSION_COLUMNS = 'id, tenant, channel, recipient, reason, created_at';

const REASONS: ReadonlySet<string> = new Set(SUPPRESSION_REASONS);

/**
 * The add rule's condition, for both adapters' upserts: an existing row is replaced only to
 * widen an `unsubscribe` (which stops LOW alone) into a reason that stops more.
 */
export const WIDENS = "suppressions.reason = 'unsubscribe' AND excluded.reason <> 'unsubscribe'";

export function suppressionFromRow(row: SuppressionRow): SuppressionRecord {
  return {
    id: Number(row.id),
    tenant: row.tenant,
    channel: row.channel as Channel,
    recipient: row.recipient,
    // A value outside the list (a newer version's) reads as manual rather than failing a claim.
    reason: (REASONS.has(row.reason) ? row.reason : 'manual') as SuppressionReason,
    createdAt: Number(row.created_at),
  };
}
