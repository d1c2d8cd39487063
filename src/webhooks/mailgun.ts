import type { DeliveryReport } from '../notifications/delivery-report.ts';
import { bareMessageId } from '../providers/email/message-id.ts';
import type { SuppressionReason } from '../suppressions/model.ts';

type Outcome = DeliveryReport['outcome'];

/** The signed part of a Mailgun webhook. */
export interface MailgunSignature {
  timestamp: unknown;
  token: unknown;
  signature: unknown;
}

/** A Mailgun webhook body, read: its signature and the report it carries (if it names a message). */
export interface MailgunParse {
  signature: MailgunSignature;
  report: DeliveryReport | undefined;
}

function outcomeOf(event: string, severity: unknown): Outcome | undefined {
  switch (event) {
    case 'accepted':
      return 'SENT';
    case 'delivered':
    case 'opened':
    case 'clicked':
      return 'DELIVERED';
    case 'rejected':
      return 'FAILED';
    // Mailgun retries a temporary failure itself; only a permanent one ends the message.
    case 'failed':
      return severity === 'temporary' ? 'SENT' : 'FAILED';
    case 'complained':
    case 'unsubscribed':
      return 'SENT';
    default:
      return undefined;
  }
}

/** What an event says about the recipient for good: a permanent failure, a complaint, an unsubscribe. */
function suppressionOf(event: string, severity: unknown): SuppressionReason | undefined {
  if (event === 'failed') return severity === 'temporary' ? undefined : 'bounce';
  if (event === 'complained') return 'complaint';
  if (event === 'unsubscribed') return 'unsubscribe';
  return undefined;
}

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' ? (value as Record<string, unknown>) : {};

/**
 * Reads a Mailgun webhook: the JSON form (`signature` + `event-data`), or the legacy form fields
 * (`timestamp`, `token`, `signature`, `event`, `Message-Id`). Reports are for the SMTP provider,
 * matched by the `herald_message_id` variable Herald sets in X-Mailgun-Variables, else by the
 * Message-ID header.
 */
export function mailgunParse(body: unknown, now: number): MailgunParse {
  const b = record(body);
  // The legacy form has `signature` too, but as a string beside `timestamp` and `token`.
  if ('event-data' in b || (b.signature !== null && typeof b.signature === 'object')) {
    const sig = record(b.signature);
    const data = record(b['event-data']);
    const headers = record(record(data.message).headers);
    const vars = record(data['user-variables']);
    const status = record(data['delivery-status']);
    const reason = [status.description, status.message, data.reason].find(
      (v) => typeof v === 'string' && v,
    ) as string | undefined;
    return {
      signature: { timestamp: sig.timestamp, token: sig.token, signature: sig.signature },
      report: build(
        data.event,
        data.severity,
        bareMessageId(vars.herald_message_id) ?? bareMessageId(headers['message-id']),
        typeof data.timestamp === 'number' ? Math.round(data.timestamp * 1000) : now,
        reason,
      ),
    };
  }
  return {
    signature: { timestamp: b.timestamp, token: b.token, signature: b.signature },
    report: build(
      b.event,
      b.severity,
      bareMessageId(b.herald_message_id) ?? bareMessageId(b['Message-Id'] ?? b['message-id']),
      // The legacy form has no event time: the signed timestamp is the closest thing to one.
      Number.isFinite(Number(b.timestamp)) ? Number(b.timestamp) * 1000 : now,
      typeof b.error === 'string' ? b.error : undefined,
    ),
  };
}

function build(
  event: unknown,
  severity: unknown,
  messageId: string | undefined,
  at: number,
  reason: string | undefined,
): DeliveryReport | undefined {
  if (typeof event !== 'string' || !messageId) return undefined;
  const outcome = outcomeOf(event, severity);
  if (!outcome) return undefined;
  const suppress = suppressionOf(event, severity);
  return {
    provider: 'smtp',
    providerMessageId: messageId,
    outcome,
    detail: `mailgun ${event}${reason ? `: ${reason.slice(0, 200)}` : ''}`,
    at,
    source: 'webhook',
    ...(suppress ? { suppress } : {}),
  };
}
