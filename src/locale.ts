/**
 * Locales and time zones as a recipient's profile gives them (docs/recipients.md): a BCP 47 language
 * tag (`fr-CA`) and an IANA time zone name (`Europe/Paris`), each checked by the runtime's own
 * Intl data and kept in its canonical spelling (`fr-ca` is stored `fr-CA`), so that a locale
 * fallback (`fr-CA`, then `fr`) compares like with like. Imports nothing of Herald's.
 */

/** Longest locale tag or time zone name taken (the longest IANA name has 30 characters). */
export const LOCALE_MAX_LENGTH = 64;

/** Most answers each memo keeps: about 600 zones exist, and a batch names few locales. */
const MEMO_LIMIT = 4096;

/**
 * A memo of `compute`: the Intl look-ups cost tens of microseconds (a DateTimeFormat each), and
 * a batch of 1000 recipients mostly names a handful. Bounded: past MEMO_LIMIT it stops adding.
 */
function memo(compute: (value: string) => string | undefined): (value: string) => string | undefined {
  const known = new Map<string, string | null>();
  return (value) => {
    const found = known.get(value);
    if (found !== undefined) return found ?? undefined;
    const result = value.length > LOCALE_MAX_LENGTH ? undefined : compute(value);
    if (known.size < MEMO_LIMIT) known.set(value, result ?? null);
    return result;
  };
}

/** The canonical form of a BCP 47 language tag (`fr-ca` → `fr-CA`), or undefined when it is none. */
export const canonicalLocale = memo((tag) => {
  try {
    const [canonical, more] = Intl.getCanonicalLocales(tag);
    return more === undefined ? canonical : undefined;
  } catch {
    return undefined;
  }
});

/** A zone name's characters: no offset (`+01:00`), which is not an IANA name. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

/** The canonical spelling of an IANA time zone name (`europe/paris` → `Europe/Paris`), or undefined. */
export const canonicalTimeZone = memo((name) => {
  if (!ZONE_NAME.test(name)) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
});
