import { setTimeout as sleep } from 'node:timers/promises';
import type { Channel } from '../../notifications/model.ts';
import type { Provider, ProviderLimits } from '../types.ts';
import { injectedFailure } from './failures.ts';

export const SANDBOX = 'sandbox';

/**
 * The built-in sandbox of one channel. It keeps nothing itself: the scheduler stores the rendered
 * message in sandbox_messages inside the completion's transaction (one write per batch, not per
 * message), and the notification goes straight to DELIVERED.
 */
export interface SandboxProvider extends Provider {
  readonly sandbox: true;
}

/** Generous limits: the sandbox is bounded by the worker's slots, not by a remote service. */
const LIMITS: ProviderLimits = { concurrency: 100_000, ratePerSecond: 1_000_000, burst: 1_000_000 };

/** Whether a provider is a sandbox (its messages go to sandbox_messages). */
export function isSandbox(provider: Provider): provider is SandboxProvider {
  return (provider as Partial<SandboxProvider>).sandbox === true;
}

/** `failures` turns on the recipient-driven failure injection of docs/sandbox.md. */
export function createSandboxProvider(channel: Channel, options: { failures: boolean }): SandboxProvider {
  return {
    name: SANDBOX,
    channel,
    sandbox: true,
    limits: LIMITS,
    accepts: () => true,
    async send(message, signal) {
      const injected = options.failures ? injectedFailure(message.recipient, message.attempt) : undefined;
      if (injected && 'result' in injected) return injected.result;
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
      };
    },
  };
}
