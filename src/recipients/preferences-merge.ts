import { mergePatch } from './merge-patch.ts';
import type { ChannelChoices, PreferenceChannel, Preferences } from './model.ts';

/** Choices as a merge patch gives them: null removes one. */
type ChoicesPatch = Partial<Record<PreferenceChannel, boolean | null>>;

/** A merge patch of preferences (the PATCH body, already checked against its schema). */
export interface PreferencesPatch {
  channels?: ChoicesPatch | null;
  categories?: Record<string, ChoicesPatch | null> | null;
}

/**
 * Preferences in their one stored form: a category without any choice is left out (it means
 * the same as no entry), so a GET never shows `{}` for a category.
 */
export function normalizedPreferences(preferences: {
  channels?: ChannelChoices;
  categories?: Record<string, ChannelChoices>;
}): Preferences {
  const categories = Object.entries(preferences.categories ?? {})
    .filter(([, choices]) => Object.keys(choices).length > 0)
    .map(([name, choices]) => [name, { ...choices }] as const);
  return { channels: { ...(preferences.channels ?? {}) }, categories: Object.fromEntries(categories) };
}

/**
 * RFC 7396 applied to preferences (merge-patch.ts): a member of the patch replaces the same
 * member, null removes it (a choice, a category's choices, or all of `channels` or `categories`),
 * a member left out stays as it was.
 */
export function mergePreferences(current: Preferences, patch: PreferencesPatch): Preferences {
  return normalizedPreferences(mergePatch(current, patch) as Preferences);
}
