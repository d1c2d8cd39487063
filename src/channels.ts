/**
 * The delivery channels and the content each one carries: a neutral leaf that notifications,
 * templates, providers and the store all build on, so none of them imports another for it.
 */

export const CHANNELS = ['email', 'sms', 'push', 'inapp'] as const;
export type Channel = (typeof CHANNELS)[number];

/**
 * The channels that send to an address through a provider (and so have suppressions, sandboxes,
 * circuits and rate limits). `inapp` has none of these: its message is stored in the
 * recipient's inbox (docs/inbox.md).
 */
export const ADDRESS_CHANNELS = ['email', 'sms', 'push'] as const;
export type AddressChannel = (typeof ADDRESS_CHANNELS)[number];

/**
 * Most characters of one SMS text: Twilio's limit for a message body (longer bodies get its
 * error 21617), so neither acceptance nor the sandbox takes what a real provider would refuse.
 */
export const SMS_TEXT_MAX = 1600;

/**
 * Inline content (or a template's fields): email uses subject/text/html, sms text, push
 * title/body/data, inapp title/body/url/data.
 */
export interface Content {
  subject?: string;
  text?: string;
  html?: string;
  title?: string;
  body?: string;
  url?: string;
  data?: Record<string, unknown>;
}
