import type { DeliveryReport } from '../notifications/delivery-report.ts';
import { bareMessageId } from '../providers/email/message-id.ts';
import type { SuppressionReason } from '../suppressions/model.ts';

type Outcome = DeliveryReport['outcome'];

const optional = (suppress: SuppressionReason | undefined) => (suppress ? { suppress } : {});

/**
 * SendGrid event types and what each says about delivery. Opens and clicks prove delivery;
 * deferrals and engagement events change nothing and are kept as WEBHOOK events.
 */
const EVENTS: Record<string, Outcome> = {
  processed: 'SENT',
  deferred: 'SENT',
  delivered: 'DELIVERED',
  open: 'DELIVERED',
  click: 'DELIVERED',
  bounce: 'FAILED',
  dropped: 'FAILED',
  blocked: 'FAILED',
  spamreport: 'SENT',
  unsubscribe: 'SENT',
  group_unsubscribe: 'SENT',
  group_resubscribe: 'SENT',
};

/**
 * What an event says about the recipient for good: a bounce (not a `blocked` one, which SendGrid
 * marks as temporary), a spam report, an unsubscribe from SendGrid's own link.
 */
function suppressionOf(e: Record<string, unknown>, type: string): SuppressionReason | undefined {
  if (type === 'bounce') return e.type === 'blocked' ? undefined : 'bounce';
  if (type === 'spamreport') return 'complaint';
  if (type === 'unsubscribe' || type === 'group_unsubscribe') return 'unsubscribe';
  return undefined;
}

/**
 * Turns one SendGrid event into a report for the SMTP provider (SendGrid is used as the SMTP
 * relay). Matched by the `herald_message_id` unique arg Herald sets in X-SMTPAPI, else by the
 * event's `smtp-id` (the Message-ID header). Events that name no message are skipped.
 */
export function sendgridReport(event: unknown, now: number): DeliveryReport | undefined {
  if (!event || typeof event !== 'object') return undefined;
  const e = event as Record<string, unknown>;
  const type = typeof e.event === 'string' ? e.event : undefined;
  const outcome = type ? EVENTS[type] : undefined;
  const messageId = bareMessageId(e.herald_message_id) ?? bareMessageId(e['smtp-id']);
  if (!type || !outcome || !messageId) return undefined;
  const reason = [e.reason, e.response, e.status].find((v) => typeof v === 'string' && v) as
    | string
    | undefined;
  return {
    provider: 'smtp',
    providerMessageId: messageId,
    outcome,
    detail: `sendgrid ${type}${reason ? `: ${reason.slice(0, 200)}` : ''}`,
    at: typeof e.timestamp === 'number' ? e.timestamp * 1000 : now,
    source: 'webhook',
    ...optional(suppressionOf(e, type)),
  };
}
