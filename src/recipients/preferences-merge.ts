import type { ChannelChoices, PreferenceChannel, Preferences } from './model.ts';

/** Choices as a merge patch gives them: null removes one. */
type ChoicesPatch = Partial<Record<PreferenceChannel, boolean | null>>;

/** A merge patch of preferences (the PATCH body, already checked against its schema). */
export interface PreferencesPatch {
  channels?: ChoicesPatch | null;
  categories?: Record<string, ChoicesPatch | null> | null;
}

/**
 * Maps of categories are built with Object.fromEntries, never by assignment: a category may be
 * named `__proto__` (CATEGORY_NAME allows it), which an assignment would take as the prototype.
 */
function mergeChoices(current: ChannelChoices, patch: ChoicesPatch): ChannelChoices {
  const out: ChannelChoices = { ...current };
  for (const [channel, choice] of Object.entries(patch) as Array<[PreferenceChannel, boolean | null]>) {
    if (choice === null) delete out[channel];
    else out[channel] = choice;
  }
  return out;
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
 * RFC 7396 applied to preferences: a member of the patch replaces the same member, null removes
 * it (a choice, a category's choices, or all of `channels` or `categories`), a member left out
 * stays as it was.
 */
export function mergePreferences(current: Preferences, patch: PreferencesPatch): Preferences {
  const channels =
    patch.channels === null
      ? {}
      : patch.channels === undefined
        ? current.channels
        : mergeChoices(current.channels, patch.channels);
  let categories = current.categories;
  if (patch.categories === null) categories = {};
  else if (patch.categories !== undefined) {
    const merged = new Map(Object.entries(current.categories));
    for (const [name, choices] of Object.entries(patch.categories)) {
      if (choices === null) merged.delete(name);
      else merged.set(name, mergeChoices(merged.get(name) ?? {}, choices));
    }
    categories = Object.fromEntries(merged);
  }
  return normalizedPreferences({ channels, categories });
}
