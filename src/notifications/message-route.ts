import { Type } from '@sinclair/typebox';
import type { CoreDeps } from '../deps.ts';
import { withExample } from '../http/examples.ts';
import type { RouteModule } from '../http/types.ts';
import type { Renderer } from '../templates/render.ts';
import { RenderError } from '../templates/render-error.ts';
import { notificationNotFound } from './read-routes.ts';
import { ContentView, NOTIFICATION_ID_EXAMPLE, NotificationIdParam } from './schemas.ts';

const MessageView = withExample(
  Type.Object({
    notificationId: Type.String(),
    channel: Type.String(),
    source: Type.Union([Type.Literal('sandbox'), Type.Literal('rendered')], {
      description:
        '`sandbox`: the copy the sandbox delivered; `rendered`: rendered now from the pinned template version (or inline content) and the variables',
    }),
    content: Type.Union([ContentView, Type.Null()]),
    detail: Type.Optional(Type.String({ description: 'Why there is no content: the render error' })),
  }),
  {
    notificationId: NOTIFICATION_ID_EXAMPLE,
    channel: 'email',
    source: 'rendered',
    content: {
      subject: 'Reset your password, Ada',
      text: 'Hi Ada, reset it here: https://example.com/r?t=1',
      html: '<p>Hi Ada,</p><p><a href="https://example.com/r?t=1">Reset your password</a></p>',
    },
  },
);

/**
 * GET /notifications/{id}/message (scope `admin`): the message a notification carries, for the
 * UI's detail page. Rendered content holds what the variables held (names, codes, links), so
 * only admins see it, and only of their tenant. The sandbox's copy is what was delivered; for a
 * real provider, nothing rendered is stored, so it is rendered again, as delivery renders it.
 */
export const notificationMessageRoute: RouteModule<CoreDeps & { renderer: Renderer }> = (app, deps) => {
  app.get(
    '/notifications/:id/message',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['notifications'],
        summary: "A notification's rendered message (admins)",
        description:
          'The sandbox copy when the sandbox delivered it; otherwise the message rendered from its pinned template version or inline content. A message that does not render has `content: null` and the error in `detail`.',
        params: NotificationIdParam,
        response: { 200: MessageView },
      },
    },
    async (request, reply) => {
      const { tenant } = request.principal;
      const found = await deps.store.notifications.get(tenant, request.params.id);
      if (!found) throw notificationNotFound();
      const { record } = found;
      reply.header('cache-control', 'private, no-store');
      const base = { notificationId: record.id, channel: record.channel };
      const copies = await deps.store.sandbox.list({ tenant, notificationId: record.id, limit: 1 });
      const copy = copies.items[0];
      if (copy) return { ...base, source: 'sandbox' as const, content: copy.content };
      try {
        const { content } = await deps.renderer.render(record);
        return { ...base, source: 'rendered' as const, content };
      } catch (error) {
        if (!(error instanceof RenderError)) throw error;
        return { ...base, source: 'rendered' as const, content: null, detail: error.message };
      }
    },
  );
};
