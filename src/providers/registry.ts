import { ADDRESS_CHANNELS, type AddressChannel, type Channel } from '../channels.ts';
import type { Config } from '../config/config.ts';
import type { Recipient } from '../notifications/model.ts';
import { createSandboxProvider } from './sandbox/index.ts';
import type { Provider, ProviderDeps } from './types.ts';

/** Builds a configured provider, or returns undefined when its configuration is absent. */
export type ProviderFactory = (deps: ProviderDeps) => Provider | Provider[] | undefined;

/**
 * The real providers' factories, in order of preference within a channel; each returns undefined
 * unless its variables are set. A family's modules (nodemailer, web-push, smpp…) are imported
 * only when one of its providers is configured: together they cost about 30 MB of RSS.
 */
export async function configuredProviderFactories(config: Config): Promise<ProviderFactory[]> {
  const configured = configuredChannels(config);
  return [
    ...(configured.push ? (await import('./push/index.ts')).pushProviderFactories : []),
    ...(configured.email ? (await import('./email/index.ts')).emailProviderFactories : []),
    ...(configured.sms ? (await import('./sms/index.ts')).smsProviderFactories : []),
  ];
}

/**
 * Which channels have a real provider configured; the others go to the sandbox (createProviderRegistry).
 * Read from the configuration alone, so an API process without the worker role says the same.
 */
export function configuredChannels(config: Config): Record<AddressChannel, boolean> {
  const p = config.providers;
  return {
    email: Boolean(p.smtp),
    sms: Boolean(p.twilio || p.smpp),
    push: Boolean(p.vapid || p.apns || p.fcm),
  };
}

/** Which provider serves which notification. */
export interface ProviderRegistry {
  /** The providers of a channel: the configured ones, or the sandbox when none is. */
  forChannel(channel: Channel): readonly Provider[];
  /**
   * The providers of the channel that accept this recipient, primary first: more than one when
   * a fallback is configured (SMTP_FALLBACK_URL, HERALD_SMS_PROVIDERS). Empty if none does.
   */
  alternatives(channel: Channel, recipient: Recipient): readonly Provider[];
  all(): readonly Provider[];
  close(): Promise<void>;
}

/**
 * Builds every configured provider once. A channel with no configured provider falls back to its
 * sandbox; a channel with some configured never silently sandboxes a recipient they cannot reach
 * (alternatives answers none and the notification fails with a clear detail).
 */
export function createProviderRegistry(
  deps: ProviderDeps,
  factories: readonly ProviderFactory[],
): ProviderRegistry {
  const built = factories.flatMap((factory) => {
    const made = factory(deps);
    return made === undefined ? [] : Array.isArray(made) ? made : [made];
  });
  // `inapp` has no provider: its messages are stored in the inbox (dispatch/deliver-inbox.ts).
  const byChannel = new Map<Channel, Provider[]>();
  for (const channel of ADDRESS_CHANNELS) {
    const real = built.filter((p) => p.channel === channel);
    byChannel.set(
      channel,
      real.length > 0
        ? real
        : [createSandboxProvider(channel, { failures: deps.config.providers.sandboxFailures })],
    );
  }
  const all = [...byChannel.values()].flat();
  return {
    forChannel: (channel) => byChannel.get(channel) ?? [],
    alternatives(channel, recipient) {
      const list = byChannel.get(channel) ?? [];
      // Fast path: one provider per channel is the common case (and always so for the sandbox).
      if (list.length === 1) return list[0]?.accepts(recipient) ? list : [];
      return list.filter((p) => p.accepts(recipient));
    },
    all: () => all,
    async close() {
      await Promise.allSettled(all.map((p) => p.close?.()));
    },
  };
}
