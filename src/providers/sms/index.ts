import type { Provider, ProviderDeps } from '../types.ts';
import { createSmppProvider } from './smpp.ts';
import { createTwilioProvider } from './twilio.ts';

/** SMS providers. */
export { createSmppProvider, type SmppConfig, type SmppOptions } from './smpp.ts';
export { createTwilioProvider, type TwilioConfig, type TwilioOptions } from './twilio.ts';

const factories = {
  twilio: (deps: ProviderDeps) => {
    const twilio = deps.config.providers.twilio;
    return twilio ? createTwilioProvider(twilio, deps) : undefined;
  },
  smpp: (deps: ProviderDeps) => {
    const smpp = deps.config.providers.smpp;
    return smpp ? createSmppProvider(smpp, deps) : undefined;
  },
};

/**
 * The SMS providers as one registry factory, in HERALD_SMS_PROVIDERS order: both reach any
 * phone number (one route), so with both configured the first is the primary and the second
 * its fallback.
 */
export const smsProviderFactories: ((deps: ProviderDeps) => Provider[])[] = [
  (deps) => deps.config.providers.smsProviders.flatMap((name) => factories[name](deps) ?? []),
];
