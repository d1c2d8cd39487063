import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { exampleOf, withExample } from '../http/examples.ts';
import type { RouteModule } from '../http/types.ts';
import { notificationNotFound } from './read-routes.ts';
import { NotificationDetail, NotificationIdParam } from './schemas.ts';
import { detailView } from './view.ts';
import type { WakeSignal } from './wakeup.ts';

/** Cancel and redrive of one notification, within the caller's tenant. */
export const notificationActionRoutes: RouteModule<CoreDeps & { wakeup: WakeSignal }> = (app, deps) => {
  const { store, clock } = deps;
  const action = (
    path: string,
    scope: string,
    [summary, description]: [string, string],
    run: 'cancel' | 'redrive',
    wrong: string,
  ) =>
    app.post(
      path,
      {
        config: { scope },
        schema: {
          tags: ['notifications'],
          summary,
          description,
          params: NotificationIdParam,
          response: {
            200: withExample(NotificationDetail, {
              ...exampleOf(NotificationDetail),
              status: 'CANCELLED',
              attempts: 0,
              scheduledAt: '2026-11-28T18:00:00.000Z',
              provider: null,
              providerMessageId: null,
              events: [
                { type: 'QUEUED', at: '2026-11-28T09:30:00.000Z' },
                { type: 'CANCELLED', at: '2026-11-28T09:31:00.000Z' },
              ],
            }),
          },
        },
      },
      async (request) => {
        const { tenant } = request.principal;
        const outcome = await store.notifications[run](tenant, request.params.id, clock.now());
        if (outcome === 'not_found') throw notificationNotFound();
        if (outcome === 'invalid_state') throw new HeraldError('INVALID_STATE', wrong);
        if (run === 'redrive') deps.wakeup.notify();
        const found = await store.notifications.get(tenant, request.params.id);
        if (!found) throw notificationNotFound();
        return detailView(found.record, found.events);
      },
    );
  action(
    '/notifications/:id/cancel',
    'notifications:send',
    [
      'Cancel a notification not yet sent',
      'Scope notifications:send. A QUEUED or RETRYING notification that no worker holds becomes CANCELLED and is never sent; any other is 409 INVALID_STATE. Takes no body. Answers the notification as GET /notifications/{id} does.',
    ],
    'cancel',
    'Only a QUEUED or RETRYING notification that no worker holds can be cancelled.',
  );
  action(
    '/notifications/:id/retry',
    'admin',
    [
      'Redrive a FAILED notification',
      'Scope admin. A FAILED notification is queued again with a fresh attempt count; any other is 409 INVALID_STATE. Takes no body. Answers the notification as GET /notifications/{id} does.',
    ],
    'redrive',
    'Only a FAILED notification can be retried.',
  );
};
