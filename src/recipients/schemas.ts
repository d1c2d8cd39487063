import { type TNull, type TOptional, type TSchema, type TUnion, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { exampleOf, withExample } from '../http/examples.ts';
import { PageSchema } from '../http/page.ts';
import { nullable } from '../http/schema.ts';
import { LOCALE_MAX_LENGTH } from '../locale.ts';
import {
  DeviceRecipient,
  EmailRecipient,
  RecipientIdText,
  SmsRecipient,
  WebPushRecipient,
} from '../notifications/schemas.ts';
import { MAX_PUSH_TARGETS, RECIPIENTS_PER_BATCH } from './model.ts';

// The schemas of a recipient's profile (docs/recipients.md). The addresses are section 3's own schemas
// (notifications/schemas.ts), so a profile takes exactly what a notification takes. A profile is
// checked by profile.ts with compiled TypeBox checks (a batch checks 1000 of them); the route
// schemas below document the bodies for the OpenAPI document.

/** Most bytes of a profile's `data`, as JSON. */
export const DATA_MAX_BYTES = 8 * 1024;
/** Longest `name`. */
export const NAME_MAX_LENGTH = 256;

export { RecipientIdText };

const Locale = Type.String({
  minLength: 1,
  maxLength: LOCALE_MAX_LENGTH,
  description: 'A BCP 47 language tag such as `fr-CA`, stored in its canonical spelling',
});
const TimeZone = Type.String({
  minLength: 1,
  maxLength: LOCALE_MAX_LENGTH,
  description: 'An IANA time zone name such as `Europe/Paris`, stored in its canonical spelling',
});
const Data = Type.Record(Type.String(), Type.Unknown(), {
  description: `Any JSON object, at most ${DATA_MAX_BYTES} bytes as JSON, given to templates`,
});

/** One push target: section 3's Web Push subscription or native device token. */
export const PushTarget = Type.Union([WebPushRecipient, DeviceRecipient]);

/** The fields of a profile; `push` items are checked one by one (profile.ts), by their form. */
function profileFields<T extends TSchema>(push: T) {
  return {
    email: EmailRecipient.properties.email,
    phone: SmsRecipient.properties.phone,
    push: Type.Array(push, { maxItems: MAX_PUSH_TARGETS }),
    locale: Locale,
    timezone: TimeZone,
    name: Type.String({ minLength: 1, maxLength: NAME_MAX_LENGTH }),
    data: Data,
  };
}

/** Every field optional. */
const optional = <P extends Record<string, TSchema>>(fields: P) =>
  Object.fromEntries(Object.entries(fields).map(([key, schema]) => [key, Type.Optional(schema)])) as {
    [K in keyof P]: TOptional<P[K]>;
  };

/** Every field optional, null standing for absent (what GET shows for an unset field). */
const optionalOrNull = <P extends Record<string, TSchema>>(fields: P) =>
  Object.fromEntries(
    Object.entries(fields).map(([key, schema]) => [key, Type.Optional(nullable(schema))]),
  ) as { [K in keyof P]: TOptional<TUnion<[P[K], TNull]>> };

const strict = { additionalProperties: false } as const;

/**
 * What profile.ts checks, once it has dropped the null fields: no unions, so that a refused
 * field's error names its own rule (an email's pattern), not "must be string or null". Push
 * items are taken as anything here and checked one by one, by their form.
 */
export const profileChecker = TypeCompiler.Compile(
  Type.Object(optional(profileFields(Type.Unknown())), strict),
);
/** A batch item's or an import row's `recipientId`. */
export const idChecker = TypeCompiler.Compile(Type.Object({ recipientId: RecipientIdText }));
export const pushCheckers = {
  webPush: TypeCompiler.Compile(WebPushRecipient),
  device: TypeCompiler.Compile(DeviceRecipient),
};

const profileExample = {
  email: 'ada@example.com',
  phone: '+15550101234',
  push: [{ deviceToken: 'a1b2c3d4e5f6a7b8c9d0', platform: 'apns' as const }],
  locale: 'fr-CA',
  timezone: 'America/Toronto',
  name: 'Ada Lovelace',
  data: { plan: 'pro' },
};

/** PUT /recipients/{recipientId}: the whole profile (documented; profile.ts checks it). */
export const ProfileBody = withExample(
  Type.Object(optionalOrNull(profileFields(PushTarget)), strict),
  profileExample,
);

/** PATCH: a JSON merge patch of the profile (RFC 7396): null removes a field. */
export const ProfilePatch = withExample(
  Type.Object(optionalOrNull(profileFields(PushTarget)), {
    ...strict,
    description:
      'A JSON merge patch (RFC 7396) of the profile: a field given replaces it, `null` removes it, `data` merges key by key.',
  }),
  { phone: null, data: { plan: 'team' } },
);

const Time = Type.String({ format: 'date-time' });

/** A recipient as the API shows it: addresses unmasked (the caller stored them). */
export const RecipientView = withExample(
  Type.Object({
    recipientId: Type.String(),
    email: nullable(Type.String()),
    phone: nullable(Type.String()),
    push: Type.Array(PushTarget),
    locale: nullable(Type.String()),
    timezone: nullable(Type.String()),
    name: nullable(Type.String()),
    data: Type.Record(Type.String(), Type.Unknown()),
    preferencesUrl: Type.String({ format: 'uri', description: "The recipient's own preferences page" }),
    createdAt: Time,
    updatedAt: Time,
  }),
  {
    recipientId: 'user-42',
    ...profileExample,
    preferencesUrl: 'https://herald.example.com/preferences/WyJkZWZhdWx0IiwidXNlci00MiJd.5m0Jx3b0',
    createdAt: '2026-11-28T09:00:00.000Z',
    updatedAt: '2026-11-28T09:30:00.000Z',
  },
);

export const RecipientPage = withExample(PageSchema(RecipientView), {
  items: [exampleOf(RecipientView)],
  nextCursor: null,
});

/** `:recipientId` where a new one may be made: its pattern is checked (400). */
export const NewRecipientParams = Type.Object({ recipientId: withExample(RecipientIdText, 'user-42') });
/** `:recipientId` of one that must exist: any other text is simply unknown (404). */
export const RecipientParams = Type.Object({
  recipientId: withExample(Type.String({ minLength: 1 }), 'user-42'),
});

export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 400 })),
  },
  strict,
);

/** An item of POST /recipients/batch: the ID and the whole profile. */
const BatchItem = Type.Object(
  { recipientId: RecipientIdText, ...optionalOrNull(profileFields(PushTarget)) },
  strict,
);

/** POST /recipients/batch (documented; the route checks the outline, then each item on its own). */
export const BatchBody = withExample(
  Type.Object({ recipients: Type.Array(BatchItem, { minItems: 1, maxItems: RECIPIENTS_PER_BATCH }) }, strict),
  {
    recipients: [
      { recipientId: 'user-42', ...profileExample },
      { recipientId: 'user-43', email: 'grace@example.com', locale: 'en-GB' },
    ],
  },
);

/** What the batch route checks before it looks at any item. */
export const batchOutline = TypeCompiler.Compile(
  Type.Object(
    { recipients: Type.Array(Type.Unknown(), { minItems: 1, maxItems: RECIPIENTS_PER_BATCH }) },
    strict,
  ),
);

export const BatchResults = withExample(
  Type.Object({
    results: Type.Array(
      Type.Object({
        index: Type.Integer(),
        recipientId: Type.Optional(Type.String()),
        status: Type.Optional(
          Type.Union([Type.Literal(200), Type.Literal(201)], {
            description: '201: created; 200: replaced',
          }),
        ),
        error: Type.Optional(Type.Unknown({ description: 'The problem (problem+json) of a refused item' })),
      }),
    ),
  }),
  {
    results: [
      { index: 0, recipientId: 'user-42', status: 201 },
      {
        index: 1,
        error: {
          type: 'https://herald.dev/problems/validation-failed',
          title: 'Validation failed',
          status: 400,
          code: 'VALIDATION_FAILED',
          detail: 'The recipient is invalid.',
          errors: [
            {
              path: 'body/recipients/1/email',
              message: 'must be an email address such as ada@example.com',
            },
          ],
        },
      },
    ],
  },
);
