import {
  CATEGORY_NAME,
  type ChannelChoices,
  PREFERENCE_CHANNELS,
  type PreferenceChannel,
  type Preferences,
} from './model.ts';
import { normalizedPreferences } from './preferences-merge.ts';
import { isPlainObject } from './profile.ts';

/**
 * The `preferences` of an import's row (docs/recipients.md): what `herald recipients export`
 * writes, `{ channels, categories }` as GET /recipients/{id}/preferences answers it. The rules
 * of the preferences API's PUT body (a boolean per channel, category names), checked here
 * because an import reads rows without the HTTP schema. The preferences or why not, one line.
 */
export function preferencesOfRow(value: unknown): Preferences | string {
  if (!isPlainObject(value)) return 'preferences must be an object { channels, categories }';
  for (const key of Object.keys(value)) {
    if (key !== 'channels' && key !== 'categories') return `preferences must NOT have the field ${key}`;
  }
  const channels = choicesOf(value.channels ?? {}, 'preferences.channels');
  if (typeof channels === 'string') return channels;
  const categories: Record<string, ChannelChoices> = {};
  const given = value.categories ?? {};
  if (!isPlainObject(given)) return 'preferences.categories must be an object';
  for (const [name, raw] of Object.entries(given)) {
    if (!CATEGORY_NAME.test(name))
      return `preferences.categories: ${JSON.stringify(name)} is not a category name`;
    const choices = choicesOf(raw, `preferences.categories.${name}`);
    if (typeof choices === 'string') return choices;
    categories[name] = choices;
  }
  return normalizedPreferences({ channels, categories });
}

function choicesOf(value: unknown, at: string): ChannelChoices | string {
  if (!isPlainObject(value)) return `${at} must be an object`;
  const choices: ChannelChoices = {};
  for (const [channel, choice] of Object.entries(value)) {
    if (!PREFERENCE_CHANNELS.includes(channel as PreferenceChannel))
      return `${at} must name channels of ${PREFERENCE_CHANNELS.join(', ')}, not ${channel}`;
    if (typeof choice !== 'boolean') return `${at}.${channel} must be true or false`;
    choices[channel as PreferenceChannel] = choice;
  }
  return choices;
}
