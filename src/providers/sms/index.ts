/** SMS providers. */
export { createTwilioProvider, type TwilioConfig, type TwilioOptions } from './twilio.ts';
