import type { OutgoingMessage, Provider, ProviderLimits, SendResult } from '../types.ts';

/**
 * The part every SMS provider shares: it reaches any recipient with a phone number and refuses a
 * message without a number or text (permanent). Each provider supplies only how it submits; its
 * rate is enforced by the scheduler (dispatch/rate-window.ts), before `send` is called.
 */
export function smsProvider(options: {
  name: string;
  limits: ProviderLimits;
  submit(to: string, text: string, message: OutgoingMessage, signal: AbortSignal): Promise<SendResult>;
  close?(): Promise<void>;
}): Provider {
  return {
    name: options.name,
    // Every SMS provider reaches any phone number: they stand in for each other.
    route: 'sms',
    channel: 'sms',
    limits: options.limits,
    accepts: (recipient) => typeof recipient.phone === 'string' && recipient.phone.length > 0,
    async send(message, signal) {
      const to = message.recipient.phone;
      const text = message.content.text;
      if (!to) return { ok: false, kind: 'permanent', detail: 'no phone number' };
      if (!text) return { ok: false, kind: 'permanent', detail: 'no text to send' };
      return options.submit(to, text, message, signal);
    },
    ...(options.close ? { close: options.close } : {}),
  };
}
