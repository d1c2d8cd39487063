import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import type { RouteModule } from '../http/types.ts';
import { notificationNotFound } from './read-routes.ts';
import { NotificationDetail, NotificationIdParam } from './schemas.ts';
import { detailView } from './view.ts';
import type { WakeSignal } from './wakeup.ts';

/** Cancel and redrive of one notification, within the caller's tenant. */
export const notificationActionRoutes: RouteModule<CoreDeps & { wakeup: WakeSignal }> = (app, deps) => {
  const { store, clock } = deps;
  const action = (path: string, scope: string, summary: string, run: 'cancel' | 'redrive', wrong: string) =>
    app.post(
      path,
      {
        config: { scope },
        schema: {
          tags: ['notifications'],
          summary,
          params: NotificationIdParam,
          response: { 200: NotificationDetail },
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
    'Cancel a notification not yet sent',
    'cancel',
    'Only a QUEUED or RETRYING notification that no worker holds can be cancelled.',
  );
  action(
    '/notifications/:id/retry',
    'admin',
    'Redrive a FAILED notification',
    'redrive',
    'Only a FAILED notification can be retried.',
  );
};
