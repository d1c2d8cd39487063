import { setTimeout as sleep } from 'node:timers/promises';
import { SMS_TEXT_MAX } from '../../channels.ts';
import type { Channel } from '../../notifications/model.ts';
import type { Provider, ProviderLimits } from '../types.ts';
import { injectedFailure } from './failures.ts';

const SANDBOX = 'sandbox';

/**
 * Generous limits, local to each worker: the sandbox is bounded by the worker's slots, not by a
 * remote service, so nothing about it is shared through the database.
 */
const LIMITS: ProviderLimits = {
  concurrency: 100_000,
  ratePerSecond: 1_000_000,
  burst: 1_000_000,
  shared: false,
};

/**
 * The built-in sandbox of one channel. It keeps nothing itself: it hands the rendered message
 * back as the result's copy, which the scheduler stores in sandbox_messages inside the
 * completion's transaction (one write per batch, not per message), and the notification goes
 * straight to DELIVERED. `failures` turns on the failure injection of docs/sandbox.md.
 */
export function createSandboxProvider(channel: Channel, options: { failures: boolean }): Provider {
  return {
    name: SANDBOX,
    channel,
    limits: LIMITS,
    accepts: () => true,
    async send(message, signal) {
      const injected = options.failures ? injectedFailure(message.recipient, message.attempt) : undefined;
      if (injected && 'result' in injected) return injected.result;
      // Refused as Twilio refuses it (error 21617): a template can render past what acceptance checks.
      const length = message.content.text?.length ?? 0;
      if (message.channel === 'sms' && length > SMS_TEXT_MAX)
        return {
          ok: false,
          kind: 'permanent',
          detail: `sandbox: the SMS text has ${length} characters, more than the limit of ${SMS_TEXT_MAX}`,
        };
      if (injected) {
        try {
          await sleep(injected.delayMs, undefined, { signal });
        } catch {
          return { ok: false, kind: 'transient', detail: 'sandbox: send aborted' };
        }
      }
      return {
        ok: true,
        delivered: true,
        providerMessageId: `sandbox-${message.notificationId}-${message.attempt}`,
        detail: 'stored in the sandbox',
        copy: { channel: message.channel, recipient: message.recipient, content: message.content },
      };
    },
  };
}
