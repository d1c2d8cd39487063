/**
 * A tenant's recipients (docs/sending-to-people.md): the caller's own user IDs with their addresses, locale and
 * preferences, and the categories a notification may name. Shared by the routes, the dispatch
 * path that resolves a recipient when a notification is processed, and the store adapters.
 */
import { CHANNELS, type Channel } from '../channels.ts';
import type { Priority, Recipient } from '../notifications/model.ts';

/** What a recipientId may be: the caller's own ID for the person. */
export const RECIPIENT_ID = /^[A-Za-z0-9._:@+-]{1,128}$/;

/** What a category name may be. */
export const CATEGORY_NAME = /^[a-z0-9._-]{1,64}$/;

/** Most push targets one profile keeps. */
export const MAX_PUSH_TARGETS = 10;

/** Most recipients one POST /recipients/batch takes (and one import commit writes). */
export const RECIPIENTS_PER_BATCH = 1000;

/** Largest POST /recipients/batch body, bytes (the API's and the gateway's limit). */
export const RECIPIENT_BATCH_BODY_LIMIT = 10 * 1024 * 1024;

/** One push target of a profile: a Web Push subscription or a native device token. */
export type PushTarget = Pick<Recipient, 'subscription'> | Pick<Recipient, 'deviceToken' | 'platform'>;

/** A recipient's profile as the caller gives it (PUT replaces it whole). */
export interface RecipientProfile {
  email?: string;
  phone?: string;
  push?: PushTarget[];
  locale?: string;
  timezone?: string;
  name?: string;
  data?: Record<string, unknown>;
}

/** The channels preferences name: every channel, the in-app inbox included (docs/inbox.md). */
export type PreferenceChannel = Channel;
export const PREFERENCE_CHANNELS: readonly PreferenceChannel[] = CHANNELS;

/** A choice per channel; an absent channel means no choice was made. */
export type ChannelChoices = Partial<Record<PreferenceChannel, boolean>>;

/** A recipient's own choices: per channel, and per category and channel. */
export interface Preferences {
  channels: ChannelChoices;
  categories: Record<string, ChannelChoices>;
}

/** No choice made (frozen: a claim shares it among every recipient that has made none). */
export const NO_PREFERENCES: Preferences = Object.freeze({
  channels: Object.freeze({}),
  categories: Object.freeze({}),
});

/** A recipient as stored. Times are epoch milliseconds. */
export interface RecipientRecord {
  tenant: string;
  id: string;
  profile: RecipientProfile;
  preferences: Preferences;
  createdAt: number;
  updatedAt: number;
}

/** A declared category: its defaults per channel and whether it ignores opt-outs. */
export interface CategoryRecord {
  tenant: string;
  name: string;
  description: string | null;
  required: boolean;
  defaultChannels: ChannelChoices;
  createdAt: number;
  updatedAt: number;
}

/**
 * Whether a notification of `category` on `channel` goes to a recipient with these preferences
 * (docs/preferences.md, "The rule"): CRITICAL and `required` categories always go; otherwise the first choice that is set of
 * the recipient's `categories[K][C]`, the recipient's `channels[C]` and the category's
 * `defaultChannels[C]` decides, and none set means it goes. Returns what opted out, or null.
 */
export function optedOut(input: {
  priority: Priority;
  channel: PreferenceChannel;
  category: string | null;
  declared: CategoryRecord | undefined;
  preferences: Preferences;
}): string | null {
  const { priority, channel, category, declared, preferences } = input;
  if (priority === 'CRITICAL' || declared?.required) return null;
  const own = category === null ? undefined : preferences.categories[category]?.[channel];
  if (own !== undefined) return own ? null : `opted out of ${category} on ${channel}`;
  const whole = preferences.channels[channel];
  if (whole !== undefined) return whole ? null : `opted out of ${channel}`;
  return declared?.defaultChannels[channel] === false ? `${category} is off by default on ${channel}` : null;
}

/**
 * A recipient's preferences after a one-click unsubscribe from an email of `category`
 * (docs/preferences.md): opted out of that category on the channel, or of the channel as a whole without one.
 */
export function unsubscribed(
  preferences: Preferences,
  channel: PreferenceChannel,
  category: string | null,
): Preferences {
  if (category === null) return { ...preferences, channels: { ...preferences.channels, [channel]: false } };
  const own = preferences.categories[category] ?? {};
  return {
    ...preferences,
    categories: { ...preferences.categories, [category]: { ...own, [channel]: false } },
  };
}
