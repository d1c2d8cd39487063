import type { Clock } from '../../clock.ts';
import { createRateWindow } from '../email/rate-window.ts';
import type { OutgoingMessage, Provider, ProviderLimits, SendResult } from '../types.ts';

/**
 * The part every SMS provider shares: it reaches any recipient with a phone number, refuses a
 * message without a number or text (permanent), and waits for its own per-second rate before
 * `submit` is called. Each provider supplies only how it submits.
 */
export function smsProvider(options: {
  name: string;
  limits: ProviderLimits;
  clock: Clock;
  submit(to: string, text: string, message: OutgoingMessage, signal: AbortSignal): Promise<SendResult>;
  close?(): Promise<void>;
}): Provider {
  const rate = createRateWindow(options.limits.ratePerSecond, 1000, options.clock);
  return {
    name: options.name,
    channel: 'sms',
    limits: options.limits,
    accepts: (recipient) => typeof recipient.phone === 'string' && recipient.phone.length > 0,
    async send(message, signal) {
      const to = message.recipient.phone;
      const text = message.content.text;
      if (!to) return { ok: false, kind: 'permanent', detail: 'no phone number' };
      if (!text) return { ok: false, kind: 'permanent', detail: 'no text to send' };
      if (!(await rate.acquire(signal))) return { ok: false, kind: 'transient', detail: 'send aborted' };
      return options.submit(to, text, message, signal);
    },
    ...(options.close ? { close: options.close } : {}),
  };
}
