import { Type } from '@sinclair/typebox';
import { describedPattern } from '../http/field-messages.ts';
import { canonicalLocale } from '../locale.ts';

/**
 * Locales (docs/localization.md): the one home of what a locale tag is, its canonical form, and the
 * fallback chain rendering follows (docs/localization.md).
 */

/** What a BCP 47 tag looks like on the wire; canonicalLocale decides whether it is one. */
const LOCALE_SHAPE = '^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$';
export const LOCALE_MESSAGE = 'must be a BCP 47 language tag such as fr-CA';

/** A locale tag in a body or a path: its shape here, its meaning checked by canonicalLocale. */
export const LocaleTag = Type.String({
  maxLength: 64,
  pattern: describedPattern(LOCALE_SHAPE, LOCALE_MESSAGE),
  examples: ['fr-CA'],
});

/**
 * The tag's canonical form (`fr-ca` → `fr-CA`, `iw` → `he`), or undefined when it is not a
 * well-formed BCP 47 tag: the one check of src/locale.ts, which recipients' profiles use too.
 * Tags are stored canonical, so a variant and a notification's locale compare as plain strings.
 */
export { canonicalLocale };

/**
 * The tags to look for, closest first: the tag, then each shorter prefix (RFC 4647 "lookup":
 * `zh-Hant-TW` → `zh-Hant` → `zh`), a singleton that would end a prefix dropped with the subtag
 * after it (`de-DE-u-co-phonebk` → … → `de-DE`). The template itself comes after the last.
 */
export function fallbackChain(locale: string): string[] {
  const parts = locale.split('-');
  const chain: string[] = [];
  while (parts.length > 0) {
    chain.push(parts.join('-'));
    parts.pop();
    if (parts.length > 0 && (parts[parts.length - 1] as string).length === 1) parts.pop();
  }
  return chain;
}

/**
 * The closest locale of `available` for the notification: its own `locale`, else its
 * recipient's, along its fallback chain; undefined when none matches (the template itself).
 */
export function closestLocale(
  wanted: { locale: string | null; recipientLocale?: string | null },
  available: { has(tag: string): boolean; readonly size: number },
): string | undefined {
  if (available.size === 0) return undefined;
  // A notification's own locale is stored canonical; a recipient's is made so here.
  const tag = wanted.locale ?? (wanted.recipientLocale ? canonicalLocale(wanted.recipientLocale) : undefined);
  if (tag === undefined) return undefined;
  return fallbackChain(tag).find((candidate) => available.has(candidate));
}
