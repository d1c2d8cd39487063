import { Type } from '@sinclair/typebox';
import { visibleTenant } from '../../auth/principal.ts';
import { ADDRESS_CHANNELS, CHANNELS, type Channel } from '../../channels.ts';
import { iso } from '../../clock.ts';
import type { CoreDeps } from '../../deps.ts';
import { withExample } from '../../http/examples.ts';
import { numericCursor, PageSchema, pageOf } from '../../http/page.ts';
import { literals } from '../../http/schema.ts';
import type { RouteModule } from '../../http/types.ts';
import { maskRecipient } from '../../notifications/mask.ts';
import { ContentView, NOTIFICATION_ID_EXAMPLE } from '../../notifications/schemas.ts';
import { configuredChannels } from '../registry.ts';

const Query = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    channel: Type.Optional(literals(CHANNELS)),
    notificationId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);

const SandboxPage = withExample(
  PageSchema(
    Type.Object({
      notificationId: Type.String(),
      channel: literals(CHANNELS),
      recipient: Type.Record(Type.String(), Type.Unknown(), { description: 'masked' }),
      content: ContentView,
      at: Type.String({ format: 'date-time' }),
    }),
  ),
  {
    items: [
      {
        notificationId: NOTIFICATION_ID_EXAMPLE,
        channel: 'email',
        recipient: { email: 'a***@example.com' },
        content: {
          subject: 'Reset your password, Ada',
          text: 'Hi Ada, reset it here: https://example.com/r?t=1',
          html: '<p>Hi Ada,</p><p><a href="https://example.com/r?t=1">Reset your password</a></p>',
        },
        at: '2026-11-28T09:30:00.011Z',
      },
    ],
    nextCursor: 'bTo0Mg',
  },
);

const SandboxChannels = withExample(
  Type.Object({
    channels: Type.Array(
      Type.Object({
        channel: literals(CHANNELS),
        sandbox: Type.Boolean({ description: 'true: no provider is configured, messages go to the sandbox' }),
      }),
    ),
  }),
  {
    channels: [
      { channel: 'email', sandbox: false },
      { channel: 'sms', sandbox: true },
      { channel: 'push', sandbox: true },
    ],
  },
);

/** The id of the last message shown. */
const cursor = numericCursor('m');

/**
 * GET /admin/sandbox: what the sandbox providers delivered, newest first.
 * Admins see their tenant's messages; admins of tenant `default` see every tenant's, as they
 * manage every tenant. Recipients are masked like everywhere else; the content is shown whole.
 */
export const sandboxRoutes: RouteModule<CoreDeps> = (app, deps) => {
  app.get(
    '/admin/sandbox',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Messages delivered by the sandbox providers',
        description:
          'Newest first. Follow `nextCursor` until it is null: with `channel` and no `notificationId`, one request looks at 10,000 messages at most, so a page may hold fewer items than `limit`, or none, and still have a next cursor.',
        querystring: Query,
        response: { 200: SandboxPage },
      },
    },
    async (request) => {
      const q = request.query as {
        limit?: number;
        cursor?: string;
        channel?: Channel;
        notificationId?: string;
      };
      const limit = q.limit ?? 50;
      const { items: rows, scannedTo } = await deps.store.sandbox.list({
        tenant: visibleTenant(request.principal),
        channel: q.channel,
        notificationId: q.notificationId,
        before: cursor.decode(q.cursor),
        limit: limit + 1,
      });
      const { page, nextCursor } = pageOf(rows, limit, cursor, (m) => m.id, scannedTo);
      return {
        items: page.map((m) => ({
          notificationId: m.notificationId,
          channel: m.channel,
          recipient: maskRecipient(m.recipient),
          content: m.content,
          at: iso(m.at),
        })),
        nextCursor,
      };
    },
  );

  app.get(
    '/admin/sandbox/channels',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Which channels go to the sandbox',
        description:
          'A channel with no provider configured delivers to the sandbox (docs/sandbox.md); this says which, from the configuration.',
        response: { 200: SandboxChannels },
      },
    },
    async () => {
      const configured = configuredChannels(deps.config);
      // `inapp` never goes to the sandbox: its messages are stored in the inbox (docs/inbox.md).
      return { channels: ADDRESS_CHANNELS.map((channel) => ({ channel, sandbox: !configured[channel] })) };
    },
  );
};
