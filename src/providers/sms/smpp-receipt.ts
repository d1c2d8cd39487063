import type { DeliveryReport } from '../../notifications/delivery-report.ts';

type Outcome = DeliveryReport['outcome'];

/** Receipt `stat` values (SMPP 3.4 appendix B) and what each means for the notification. */
const STAT: Record<string, Outcome> = {
  DELIVRD: 'DELIVERED',
  UNDELIV: 'FAILED',
  EXPIRED: 'FAILED',
  REJECTD: 'FAILED',
  DELETED: 'FAILED',
  ENROUTE: 'SENT',
  ACCEPTD: 'SENT',
  UNKNOWN: 'SENT',
};

/** The message_state TLV (section 5.2.28), used when the text carries no `stat`. */
const STATE: Record<number, string> = {
  1: 'ENROUTE',
  2: 'DELIVRD',
  3: 'EXPIRED',
  4: 'DELETED',
  5: 'UNDELIV',
  6: 'ACCEPTD',
  7: 'UNKNOWN',
  8: 'REJECTD',
};

/** esm_class bit 2: this deliver_sm is an SMSC delivery receipt, not a mobile-originated message. */
const RECEIPT_BIT = 0x04;

/** The fields of a decoded deliver_sm that a receipt uses. */
export interface DeliverSm {
  esm_class?: unknown;
  short_message?: unknown;
  message_payload?: unknown;
  receipted_message_id?: unknown;
  message_state?: unknown;
}

function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('latin1');
  if (value && typeof value === 'object' && 'message' in value)
    return textOf((value as { message: unknown }).message);
  return '';
}

/** A delivery receipt read: the message id, its `stat`, and the outcome (undefined if not a receipt). */
export interface Receipt {
  messageId: string;
  stat: string;
  error: string | undefined;
  outcome: Outcome;
}

/**
 * Reads a deliver_sm receipt: `id:... sub:... dlvrd:... submit date:... done date:... stat:DELIVRD
 * err:000 text:...`, preferring the receipted_message_id and message_state TLVs when present
 * (SMPP 3.4 5.3.2.12), since the text format is only customary.
 */
export function parseReceipt(pdu: DeliverSm): Receipt | undefined {
  if (typeof pdu.esm_class !== 'number' || (pdu.esm_class & RECEIPT_BIT) === 0) return undefined;
  const text = textOf(pdu.short_message) || textOf(pdu.message_payload);
  const tlvId = typeof pdu.receipted_message_id === 'string' ? pdu.receipted_message_id.trim() : '';
  const messageId = tlvId || /(?:^|\s)id:(\S+)/i.exec(text)?.[1];
  const stateStat = typeof pdu.message_state === 'number' ? STATE[pdu.message_state] : undefined;
  const stat = (/(?:^|\s)stat:(\w+)/i.exec(text)?.[1] ?? stateStat)?.toUpperCase();
  if (!messageId || !stat) return undefined;
  const outcome = STAT[stat];
  if (!outcome) return undefined;
  return { messageId, stat, error: /(?:^|\s)err:(\w+)/i.exec(text)?.[1], outcome };
}
