import type { DeliveryReport } from '../notifications/delivery-report.ts';
import { OPTED_OUT } from '../providers/sms/twilio-errors.ts';

type Outcome = DeliveryReport['outcome'];

/** Twilio message statuses (status callbacks) and what each says about delivery. */
const STATUS: Record<string, Outcome> = {
  accepted: 'SENT',
  scheduled: 'SENT',
  queued: 'SENT',
  sending: 'SENT',
  sent: 'SENT',
  delivered: 'DELIVERED',
  read: 'DELIVERED',
  undelivered: 'FAILED',
  failed: 'FAILED',
  canceled: 'FAILED',
};

/** A Twilio status callback turned into a report, or a reason it is not one. */
export type TwilioParse = { report: DeliveryReport } | { problem: string };

/** Reads a status callback's form parameters (MessageSid, MessageStatus, ErrorCode). */
export function twilioReport(params: URLSearchParams, now: number): TwilioParse {
  const sid = params.get('MessageSid') ?? params.get('SmsSid');
  const status = (params.get('MessageStatus') ?? params.get('SmsStatus'))?.toLowerCase();
  if (!sid || !status) return { problem: "must have required properties 'MessageSid' and 'MessageStatus'" };
  const outcome = STATUS[status];
  if (!outcome) return { problem: `must have a MessageStatus Twilio documents, not "${status}"` };
  const errorCode = params.get('ErrorCode');
  return {
    report: {
      provider: 'twilio',
      providerMessageId: sid,
      outcome,
      detail: errorCode ? `${status} (error ${errorCode})` : status,
      at: now,
      source: 'webhook',
      // A status callback carries no time of its own: a status reported again is the same report.
      identity: `twilio:${status}:${errorCode ?? ''}`,
      // The recipient replied STOP: Twilio reports undelivered with error 21610.
      ...(Number(errorCode) === OPTED_OUT ? { suppress: 'opt_out' as const } : {}),
    },
  };
}
