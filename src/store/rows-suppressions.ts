import type { Channel } from '../notifications/model.ts';
import type { SuppressionRecord } from '../suppressions/model.ts';

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
    // Herald's own name or an admin's words (free text, 1 to 200 characters), as stored.
    reason: row.reason,
    createdAt: Number(row.created_at),
  };
}
