import { type TSchema, Type } from '@sinclair/typebox';
import { withExample } from '../http/examples.ts';
import { CategoryName } from '../notifications/schemas.ts';

/** The HTTP schemas of categories and preferences (docs/preferences.md), shared by their routes. */

const strict = { additionalProperties: false } as const;

/** A recipientId in a path: the one schema of recipients/schemas.ts. */
export { RecipientIdText as RecipientId } from './schemas.ts';
export { CategoryName };

/**
 * A boolean, and only a boolean: an enum, not `type: boolean`, which the app's ajv (coerceTypes)
 * would fill from 1 or "true". A choice is what the caller said, never a guess.
 */
export const StrictBoolean = (options: { description?: string } = {}) =>
  Type.Unsafe<boolean>({ enum: [true, false], ...options });
/** The same, or null (a merge patch's removal). */
const StrictBooleanOrNull = () => Type.Unsafe<boolean | null>({ enum: [true, false, null] });
/** A schema's value or null, the null by `const` for the same reason: `type: null` takes "" and false. */
const orNull = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Unsafe<null>({ const: null })]);

/** One choice per channel (each a boolean; an absent channel: no choice). */
const perChannel = <T extends TSchema>(choice: () => T) =>
  Type.Object(
    {
      email: Type.Optional(choice()),
      sms: Type.Optional(choice()),
      push: Type.Optional(choice()),
      inapp: Type.Optional(choice()),
    },
    strict,
  );

export const ChannelChoices = perChannel(() => StrictBoolean());

/** `categories` of preferences: a category name to its choices. */
const CategoryChoices = Type.Record(CategoryName, ChannelChoices, strict);

const PREFERENCES_EXAMPLE = {
  channels: { sms: false },
  categories: { marketing: { email: false, push: true } },
};

/** A recipient's preferences as the API answers them. */
export const PreferencesView = withExample(
  Type.Object({ channels: ChannelChoices, categories: CategoryChoices }),
  PREFERENCES_EXAMPLE,
);

/** PUT: the whole preferences; a part left out is empty (no choice). */
export const PreferencesBody = withExample(
  Type.Object(
    { channels: Type.Optional(ChannelChoices), categories: Type.Optional(CategoryChoices) },
    strict,
  ),
  PREFERENCES_EXAMPLE,
);

/** PATCH: a JSON merge patch (RFC 7396) of the preferences; null removes a choice or a whole part. */
export const PreferencesPatch = withExample(
  Type.Object(
    {
      channels: Type.Optional(orNull(perChannel(StrictBooleanOrNull))),
      categories: Type.Optional(
        orNull(Type.Record(CategoryName, orNull(perChannel(StrictBooleanOrNull)), strict)),
      ),
    },
    strict,
  ),
  { channels: { sms: null }, categories: { marketing: { email: true }, digest: null } },
);
