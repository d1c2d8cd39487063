import { Type } from '@sinclair/typebox';
import { ADDRESS_CHANNELS, type AddressChannel } from '../channels.ts';
import { iso } from '../clock.ts';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { exampleOf, withExample } from '../http/examples.ts';
import { numericCursor, PageSchema, pageOf } from '../http/page.ts';
import { literals } from '../http/schema.ts';
import type { RouteModule } from '../http/types.ts';
import { maskKey } from '../notifications/mask.ts';
import { RECIPIENT_PATTERNS } from '../notifications/schemas.ts';
import {
  keyOfText,
  REASON_MAX_LENGTH,
  reasonProblem,
  SUPPRESSION_REASONS,
  type SuppressionRecord,
} from './model.ts';

const RecipientText = Type.String({
  minLength: 1,
  maxLength: 4096,
  description:
    'email: the address; sms: the E.164 number; push: the Web Push endpoint or the APNs/FCM device token',
});
const SuppressionView = withExample(
  Type.Object({
    channel: literals(ADDRESS_CHANNELS),
    recipient: Type.String({ description: 'Masked like every recipient Herald shows' }),
    reason: Type.String({
      description: `The admin's own words, or the name of Herald's own reason: ${SUPPRESSION_REASONS.map((r) => `\`${r}\``).join(', ')}`,
    }),
    createdAt: Type.String({ format: 'date-time' }),
  }),
  {
    channel: 'email',
    recipient: 'a***@example.com',
    reason: 'asked by phone',
    createdAt: '2026-11-28T09:00:00.000Z',
  },
);
/** An admin's reason, in their own words (reasonProblem says what else it must be). */
const ReasonText = Type.String({
  minLength: 1,
  maxLength: REASON_MAX_LENGTH,
  description: `Why, in your own words: one line, not blank, up to ${REASON_MAX_LENGTH} characters, stored without surrounding spaces; \`manual\` when left out`,
});
const CreateBody = withExample(
  Type.Object(
    {
      channel: literals(ADDRESS_CHANNELS),
      recipient: RecipientText,
      reason: Type.Optional(ReasonText),
    },
    { additionalProperties: false },
  ),
  { channel: 'email', recipient: 'ada@example.com', reason: 'asked by phone' },
);
const ListQuery = Type.Object(
  {
    channel: Type.Optional(literals(ADDRESS_CHANNELS)),
    recipient: Type.Optional({
      ...RecipientText,
      description: 'Only this recipient (exact, unmasked): is it suppressed?',
    }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
const KeyParams = Type.Object({
  channel: withExample(literals(ADDRESS_CHANNELS), 'email'),
  recipient: withExample(RecipientText, 'ada@example.com'),
});

const cursor = numericCursor('s');
const view = (s: SuppressionRecord) => ({
  // Only address channels are ever suppressed: this API takes no other, nor does dispatch make one.
  channel: s.channel as AddressChannel,
  recipient: maskKey(s.channel, s.recipient),
  reason: s.reason,
  createdAt: iso(s.createdAt),
});

const PATTERNS: Record<AddressChannel, RegExp[]> = {
  email: [new RegExp(RECIPIENT_PATTERNS.email)],
  sms: [new RegExp(RECIPIENT_PATTERNS.phone)],
  push: [new RegExp(RECIPIENT_PATTERNS.endpoint), new RegExp(RECIPIENT_PATTERNS.deviceToken)],
};

/** The recipient's key, or VALIDATION_FAILED when it cannot be a recipient of that channel. */
function keyOf(channel: AddressChannel, recipient: string, path: string): string {
  const key = keyOfText(channel, recipient);
  if (!PATTERNS[channel].some((p) => p.test(key))) {
    const kind = `${channel === 'email' ? 'an' : 'a'} ${channel} recipient`;
    throw new HeraldError('VALIDATION_FAILED', `The recipient cannot be ${kind}.`, {
      errors: [{ path, message: `must be ${kind} (${RecipientText.description})` }],
    });
  }
  return key;
}

/**
 * /suppressions: a tenant's suppressed recipients per channel (docs/deliverability.md). Listing
 * needs `notifications:read` and shows recipients masked; adding and removing need `admin`.
 */
export const suppressionRoutes: RouteModule<CoreDeps> = (app, deps) => {
  const { store, clock } = deps;

  app.get(
    '/suppressions',
    {
      config: { scope: 'notifications:read' },
      schema: {
        tags: ['suppressions'],
        summary: "The tenant's suppressed recipients, newest first",
        description:
          'Follow `nextCursor` until it is null: with `channel` alone, one request looks at 10,000 suppressions at most, so a page may hold fewer items than `limit`, or none, and still have a next cursor.',
        querystring: ListQuery,
        response: {
          200: withExample(PageSchema(SuppressionView), {
            items: [exampleOf(SuppressionView)],
            nextCursor: null,
          }),
        },
      },
    },
    async (request) => {
      const { channel, limit = 50 } = request.query;
      if (request.query.recipient !== undefined && channel === undefined) {
        throw new HeraldError('VALIDATION_FAILED', 'A recipient filter needs its channel.', {
          errors: [{ path: 'querystring/channel', message: 'must be given with recipient' }],
        });
      }
      const recipient =
        request.query.recipient === undefined || channel === undefined
          ? undefined
          : keyOfText(channel, request.query.recipient);
      const { items: rows, scannedTo } = await store.suppressions.list(request.principal.tenant, {
        channel,
        recipient,
        limit: limit + 1,
        before: cursor.decode(request.query.cursor),
      });
      const { page, nextCursor } = pageOf(rows, limit, cursor, (s) => s.id, scannedTo);
      return { items: page.map(view), nextCursor };
    },
  );

  app.post(
    '/suppressions',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['suppressions'],
        summary: 'Suppress a recipient (reason `manual` unless given); an existing one is kept',
        description:
          'Scope admin. Notifications of the tenant to this recipient on this channel make no provider call and end FAILED, their event naming the suppression; CRITICAL ones are still attempted. The recipient is the unmasked one; the answer masks it.',
        body: CreateBody,
        response: { 201: SuppressionView },
      },
    },
    async (request, reply) => {
      const { channel } = request.body;
      const given = request.body.reason;
      const problem = given === undefined ? undefined : reasonProblem(given);
      if (problem) {
        throw new HeraldError('VALIDATION_FAILED', `The reason ${problem}.`, {
          errors: [{ path: 'body/reason', message: problem }],
        });
      }
      const reason = given?.trim() ?? 'manual';
      const recipient = keyOf(channel, request.body.recipient, 'body/recipient');
      const [stored] = await store.suppressions.add(
        [{ tenant: request.principal.tenant, channel, recipient, reason }],
        clock.now(),
      );
      return reply.code(201).send(view(stored as SuppressionRecord));
    },
  );

  app.delete(
    '/suppressions/:channel/:recipient',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['suppressions'],
        summary: 'Remove a suppression: the recipient gets notifications again',
        description: 'The recipient is the unmasked one, URL-encoded (a push endpoint is a URL itself).',
        params: KeyParams,
        response: { 204: { description: 'Removed', type: 'null' } },
      },
    },
    async (request, reply) => {
      const { channel } = request.params;
      const recipient = keyOfText(channel, request.params.recipient);
      if (!(await store.suppressions.remove({ tenant: request.principal.tenant, channel, recipient }))) {
        throw new HeraldError('NOT_FOUND', 'That recipient is not suppressed.');
      }
      return reply.code(204).send(null);
    },
  );
};
