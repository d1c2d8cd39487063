import type { Provider, ProviderDeps } from '../types.ts';
import { createSmppProvider } from './smpp.ts';
import { createTwilioProvider } from './twilio.ts';

/** SMS providers. */
export { createSmppProvider, type SmppConfig, type SmppOptions } from './smpp.ts';
export { createTwilioProvider, type TwilioConfig, type TwilioOptions } from './twilio.ts';

/**
 * The SMS providers as registry factories, in order of preference: both accept any phone
 * number, so when both are configured Twilio serves every SMS and SMPP stays bound but idle.
 */
export const smsProviderFactories: ((deps: ProviderDeps) => Provider | undefined)[] = [
  (deps) => {
    const twilio = deps.config.providers.twilio;
    return twilio ? createTwilioProvider(twilio, deps) : undefined;
  },
  (deps) => {
    const smpp = deps.config.providers.smpp;
    return smpp ? createSmppProvider(smpp, deps) : undefined;
  },
];
