import { Type } from '@sinclair/typebox';
import { HeraldError } from '../http/errors.ts';
import type { App, AppDeps } from '../http/types.ts';
import { maskRecipient } from '../notifications/mask.ts';
import { CHANNELS, type Channel } from '../notifications/model.ts';

const Query = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    channel: Type.Optional(Type.Union(CHANNELS.map((c) => Type.Literal(c)))),
    notificationId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);

// Opaque to clients, like the notifications cursor: the id of the last message, wrapped.
const encode = (id: number) => Buffer.from(`m:${id}`).toString('base64url');
function decode(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const match = /^m:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match) {
    throw new HeraldError('VALIDATION_FAILED', 'The cursor is invalid.', {
      errors: [{ path: 'querystring/cursor', message: 'use the nextCursor of a previous page' }],
    });
  }
  return Number(match[1]);
}

/**
 * GET /admin/sandbox: what the sandbox providers delivered, newest first (API.md section 7).
 * Admins see their tenant's messages; admins of tenant `default` see every tenant's, as they
 * manage every tenant. Recipients are masked like everywhere else; the content is shown whole.
 */
export function sandboxRoutes(app: App, deps: AppDeps): void {
  app.get(
    '/admin/sandbox',
    {
      config: { scope: 'admin' },
      schema: { tags: ['admin'], summary: 'Messages delivered by the sandbox providers', querystring: Query },
    },
    async (request) => {
      const q = request.query as {
        limit?: number;
        cursor?: string;
        channel?: Channel;
        notificationId?: string;
      };
      const limit = q.limit ?? 50;
      const tenant = request.principal.tenant === 'default' ? undefined : request.principal.tenant;
      const rows = await deps.store.sandbox.list({
        tenant,
        channel: q.channel,
        notificationId: q.notificationId,
        before: decode(q.cursor),
        limit: limit + 1,
      });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        items: page.map((m) => ({
          notificationId: m.notificationId,
          channel: m.channel,
          recipient: maskRecipient(m.recipient),
          content: m.content,
          at: new Date(m.at).toISOString(),
        })),
        nextCursor: rows.length > limit && last ? encode(last.id) : null,
      };
    },
  );
}
