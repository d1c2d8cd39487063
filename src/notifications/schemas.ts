import { type Static, type TObject, type TProperties, type TSchema, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { CHANNELS, SMS_TEXT_MAX } from '../channels.ts';
import { ISO_TIME_PATTERN } from '../clock.ts';
import { withExample } from '../http/examples.ts';
import { describedPattern } from '../http/field-messages.ts';
import { PageSchema } from '../http/page.ts';
import { literals, nullable } from '../http/schema.ts';
import { INBOX_LIMITS } from '../inbox/content.ts';
import { CATEGORY_NAME, RECIPIENT_ID } from '../recipients/model.ts';
import { TemplateKey } from '../templates/key.ts';
import { LocaleTag } from '../templates/locale.ts';
import { PRIORITIES, STATUSES } from './model.ts';

// Schemas of one notification body, one per channel (push has two recipient forms). Compiled
// once with TypeBox's compiler: a Check is a few property tests, which the batch endpoint's
// 100k items a second can afford. Formats are patterns, so no global format registry is needed.

const strict = { additionalProperties: false } as const;

/** A notification ID (a UUIDv7) for the OpenAPI document's examples. */
export const NOTIFICATION_ID_EXAMPLE = '019b76da-a800-70e3-aa1e-88b1e3a76f06';
const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });

const IsoTime = Type.String({
  maxLength: 40,
  pattern: describedPattern(
    ISO_TIME_PATTERN,
    'must be an ISO 8601 time with a zone, such as 2026-01-01T09:00:00Z',
  ),
  description: 'ISO 8601 time with a zone, e.g. 2026-01-01T09:00:00Z',
});
const Bag = Type.Record(Type.String(), Type.Unknown());

/**
 * What each channel's recipient must look like (the suppression routes check against them too),
 * and what a failed match says; a length the pattern does not hold is the schema's own limit.
 */
export const RECIPIENT_PATTERNS = {
  email: describedPattern(
    '^[^\\s@<>(),;:"\\[\\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$',
    'must be an email address such as ada@example.com',
  ),
  phone: describedPattern(
    '^\\+[1-9][0-9]{6,14}$',
    'must be an E.164 phone number: + and 7 to 15 digits, such as +15550101234',
  ),
  endpoint: describedPattern('^https://[^\\s]+$', 'must be an https:// push service URL'),
  deviceToken: describedPattern(
    '^[A-Za-z0-9_:.=+/-]+$',
    'must be letters, digits and the characters _ : . = + / - only',
  ),
};
/** A Web Push subscription's keys: base64 or base64url. */
const PUSH_KEY = describedPattern('^[A-Za-z0-9_=+/-]+$', 'must be base64 or base64url');

export const EmailRecipient = Type.Object(
  { email: Type.String({ maxLength: 254, pattern: RECIPIENT_PATTERNS.email }) },
  strict,
);
export const SmsRecipient = Type.Object(
  { phone: Type.String({ pattern: RECIPIENT_PATTERNS.phone }) },
  strict,
);
export const WebPushRecipient = Type.Object(
  {
    subscription: Type.Object(
      {
        endpoint: Type.String({ maxLength: 2048, pattern: RECIPIENT_PATTERNS.endpoint }),
        expirationTime: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
        keys: Type.Object(
          {
            p256dh: Type.String({ minLength: 1, maxLength: 256, pattern: PUSH_KEY }),
            auth: Type.String({ minLength: 1, maxLength: 256, pattern: PUSH_KEY }),
          },
          strict,
        ),
      },
      strict,
    ),
  },
  strict,
);
export const DeviceRecipient = Type.Object(
  {
    deviceToken: Type.String({ minLength: 8, maxLength: 4096, pattern: RECIPIENT_PATTERNS.deviceToken }),
    platform: Type.Union([Type.Literal('apns'), Type.Literal('fcm')]),
  },
  strict,
);

/** A recipientId, wherever one is given (a notification's recipient, a path, a batch, a topic's subscribers). */
export const RecipientIdText = Type.String({
  pattern: describedPattern(
    RECIPIENT_ID.source,
    'must be a recipient ID: 1 to 128 letters, digits or the characters . _ : @ + -',
  ),
});

/** A person, by the caller's own ID (docs/sending-to-people.md): the address is read when it is processed. */
const PersonRecipient = Type.Object({ id: RecipientIdText }, strict);

/** A category name, wherever one is given (a notification, a category's path, preferences). */
export const CategoryName = Type.String({
  maxLength: 64,
  pattern: describedPattern(
    CATEGORY_NAME.source,
    'must be a category name: 1 to 64 lower-case letters, digits, dots, dashes or underscores',
  ),
});

const Category = {
  ...CategoryName,
  description:
    "The notification's category: the recipient's preferences for it apply (docs/sending-to-people.md).",
};

const EmailContent = Type.Object(
  { subject: Text(998), text: Type.Optional(Type.String()), html: Type.Optional(Type.String()) },
  strict,
);
const SmsContent = Type.Object(
  {
    text: Type.String({
      minLength: 1,
      maxLength: SMS_TEXT_MAX,
      description: `At most ${SMS_TEXT_MAX} characters (Twilio's limit for one message).`,
    }),
  },
  strict,
);
const PushContent = Type.Object({ title: Text(1000), body: Text(4000), data: Type.Optional(Bag) }, strict);
const InappContent = Type.Object(
  {
    title: Text(INBOX_LIMITS.title),
    body: Text(INBOX_LIMITS.body),
    url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: INBOX_LIMITS.url,
        description: 'The link of the message: an http(s) URL or a path of the app (`/orders/42`).',
      }),
    ),
    data: Type.Optional(Bag),
  },
  strict,
);

/** Each channel's inline content, wherever content is given (a notification, a workflow's send step). */
export const CONTENT_SCHEMAS = {
  email: EmailContent,
  sms: SmsContent,
  push: PushContent,
  inapp: InappContent,
} as const;

function body(channel: TSchema, recipient: TObject, content: TObject): TObject<TProperties> {
  return Type.Object(
    {
      channel,
      priority: Type.Optional(literals(PRIORITIES)),
      recipient,
      template: Type.Optional(TemplateKey),
      content: Type.Optional(content),
      variables: Type.Optional(Bag),
      metadata: Type.Optional(Bag),
      locale: Type.Optional({
        ...LocaleTag,
        description:
          "A BCP 47 tag (stored canonical): the template's closest locale variant renders (docs/localization.md).",
      }),
      category: Type.Optional(Category),
      expiresAt: Type.Optional(IsoTime),
      scheduledAt: Type.Optional(IsoTime),
    },
    strict,
  );
}

const EmailBody = body(Type.Literal('email'), EmailRecipient, EmailContent);
const SmsBody = body(Type.Literal('sms'), SmsRecipient, SmsContent);
const WebPushBody = body(Type.Literal('push'), WebPushRecipient, PushContent);
const DevicePushBody = body(Type.Literal('push'), DeviceRecipient, PushContent);
const EmailPersonBody = body(Type.Literal('email'), PersonRecipient, EmailContent);
const SmsPersonBody = body(Type.Literal('sms'), PersonRecipient, SmsContent);
const PushPersonBody = body(Type.Literal('push'), PersonRecipient, PushContent);
/** `inapp` goes to a recipient's inbox: its recipient is always `{ id }` (docs/inbox.md). */
const InappBody = body(Type.Literal('inapp'), PersonRecipient, InappContent);
/**
 * A body whose channel is missing or none of them: which recipient and content it needs is not
 * known, but its channel and its other fields are still checked, so one answer lists them all.
 */
const AnyChannelBody = body(literals(CHANNELS), Type.Object({}), Type.Object({}));

/** The documented union (OpenAPI); validation picks one compiled schema by channel instead. */
export const NotificationBody = withExample(
  Type.Union([
    EmailBody,
    SmsBody,
    WebPushBody,
    DevicePushBody,
    EmailPersonBody,
    SmsPersonBody,
    PushPersonBody,
    InappBody,
  ]),
  {
    channel: 'email',
    priority: 'HIGH',
    recipient: { email: 'ada@example.com' },
    template: 'password-reset',
    variables: { name: 'Ada', link: 'https://example.com/r?t=1' },
    metadata: { userId: 'u_42' },
  },
);

export const checkers = {
  email: TypeCompiler.Compile(EmailBody),
  sms: TypeCompiler.Compile(SmsBody),
  webPush: TypeCompiler.Compile(WebPushBody),
  devicePush: TypeCompiler.Compile(DevicePushBody),
  emailPerson: TypeCompiler.Compile(EmailPersonBody),
  smsPerson: TypeCompiler.Compile(SmsPersonBody),
  pushPerson: TypeCompiler.Compile(PushPersonBody),
  inapp: TypeCompiler.Compile(InappBody),
  anyChannel: TypeCompiler.Compile(AnyChannelBody),
};

/** The 201 (and idempotent 200) answer of POST /notifications. */
export const Accepted = withExample(
  Type.Object({
    notificationId: Type.String(),
    status: Type.String(),
    channel: Type.String(),
    priority: Type.String(),
    createdAt: Type.String(),
  }),
  {
    notificationId: NOTIFICATION_ID_EXAMPLE,
    status: 'QUEUED',
    channel: 'email',
    priority: 'HIGH',
    createdAt: '2026-11-28T09:30:00.000Z',
  },
);

const Time = Type.String({ format: 'date-time' });

/** Rendered (or template) content as the API shows it (channels.ts Content). */
export const ContentView = Type.Object({
  subject: Type.Optional(Type.String()),
  text: Type.Optional(Type.String()),
  html: Type.Optional(Type.String()),
  title: Type.Optional(Type.String()),
  body: Type.Optional(Type.String()),
  url: Type.Optional(Type.String()),
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

/** A notification as GET /notifications lists it (view.ts summaryView): recipient masked. */
export const NotificationSummary = Type.Object({
  notificationId: Type.String(),
  status: literals(STATUSES),
  channel: literals(CHANNELS),
  priority: literals(PRIORITIES),
  recipient: Type.Record(Type.String(), Type.Unknown(), { description: 'masked' }),
  template: nullable(Type.String()),
  templateVersion: nullable(Type.Integer()),
  locale: nullable(Type.String({ description: 'Its own locale (canonical BCP 47), or null' })),
  category: nullable(
    Type.String({
      description:
        "Its category: its own, else its template version's default (docs/preferences.md), or null",
    }),
  ),
  metadata: Type.Unknown(),
  attempts: Type.Integer(),
  createdAt: Time,
  updatedAt: Time,
  scheduledAt: nullable(Time),
  expiresAt: nullable(Time),
  nextAttemptAt: nullable(Time),
  provider: nullable(Type.String()),
  providerMessageId: nullable(Type.String()),
  broadcastId: Type.Optional(Type.String({ description: 'The broadcast that made it; absent otherwise' })),
});

/** One event of a notification's history, oldest first. */
export const NotificationEvent = Type.Object({
  type: Type.String(),
  at: Time,
  attempt: Type.Optional(Type.Integer()),
  provider: Type.Optional(Type.String()),
  detail: Type.Optional(Type.String()),
  source: Type.Optional(Type.String()),
  locale: Type.Optional(
    Type.String({ description: 'On SENT: the locale variant rendered; absent: the template itself' }),
  ),
});

/** GET /notifications/{id}: the summary and every event (view.ts detailView). */
const summaryExample: Static<typeof NotificationSummary> = {
  notificationId: NOTIFICATION_ID_EXAMPLE,
  status: 'DELIVERED',
  channel: 'email',
  priority: 'HIGH',
  recipient: { email: 'a***@example.com' },
  template: 'password-reset',
  templateVersion: 2,
  locale: 'fr-CA',
  category: 'security',
  metadata: { userId: 'u_42' },
  attempts: 1,
  createdAt: '2026-11-28T09:30:00.000Z',
  updatedAt: '2026-11-28T09:30:00.012Z',
  scheduledAt: null,
  expiresAt: null,
  nextAttemptAt: null,
  provider: 'sandbox',
  providerMessageId: 'sbx_0193a2b4c5d6',
};

export const NotificationDetail = withExample(
  Type.Composite([NotificationSummary, Type.Object({ events: Type.Array(NotificationEvent) })]),
  {
    ...summaryExample,
    events: [
      { type: 'QUEUED', at: '2026-11-28T09:30:00.000Z' },
      { type: 'PROCESSING', at: '2026-11-28T09:30:00.004Z', attempt: 1 },
      {
        type: 'SENT',
        at: '2026-11-28T09:30:00.011Z',
        attempt: 1,
        provider: 'sandbox',
        detail: 'stored in the sandbox',
        locale: 'fr',
      },
      { type: 'DELIVERED', at: '2026-11-28T09:30:00.012Z', provider: 'sandbox', source: 'provider' },
    ],
  },
);

export const NotificationPage = withExample(PageSchema(NotificationSummary), {
  items: [summaryExample],
  nextCursor: 'bjoxNzMyNzg2MjAwMDAw',
});

/** `:id` of one notification. No length bound: any unknown ID, however long, answers 404 like every other. */
export const NotificationIdParam = Type.Object({
  id: Type.String({ minLength: 1, examples: [NOTIFICATION_ID_EXAMPLE] }),
});
