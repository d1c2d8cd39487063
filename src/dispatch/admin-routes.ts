import { Type } from '@sinclair/typebox';
import { visibleTenant } from '../auth/principal.ts';
import type { CoreDeps } from '../deps.ts';
import { withExample } from '../http/examples.ts';
import { literals, nullable } from '../http/schema.ts';
import type { RouteModule } from '../http/types.ts';
import { CHANNELS, type Channel, PRIORITIES, type Priority, priorityRank } from '../notifications/model.ts';
import type { WakeSignal } from '../notifications/wakeup.ts';
import { queuesView } from './queues-view.ts';

const QueueRow = Type.Object({
  priority: literals(PRIORITIES),
  channel: literals(CHANNELS),
  depth: Type.Integer({ description: 'QUEUED and RETRYING, scheduled ones included' }),
  oldestAgeMs: nullable(Type.Integer()),
  scheduled: Type.Integer({
    description: 'Of `depth`, the ones not due yet (a later scheduledAt, a retry backoff)',
  }),
  oldestDueAgeMs: nullable(
    Type.Integer({
      description: 'Age of the oldest one that is due now (scheduled ones left out); null when none is',
    }),
  ),
  inFlight: Type.Integer(),
  paused: Type.Boolean(),
});
const QueuesBody = Type.Object({ queues: Type.Array(QueueRow) });
/** Two of the 12 rows, for the document's example. */
const queuesExample = (lowEmailPaused: boolean) => ({
  queues: [
    {
      priority: 'CRITICAL' as const,
      channel: 'email' as const,
      depth: 0,
      oldestAgeMs: null,
      scheduled: 0,
      oldestDueAgeMs: null,
      inFlight: 1,
      paused: false,
    },
    {
      priority: 'LOW' as const,
      channel: 'email' as const,
      depth: 1200,
      oldestAgeMs: 84000,
      scheduled: 200,
      oldestDueAgeMs: 84000,
      inFlight: 0,
      paused: lowEmailPaused,
    },
  ],
});
const Selector = withExample(
  Type.Object(
    {
      priority: Type.Optional(literals(PRIORITIES)),
      channel: Type.Optional(literals(CHANNELS)),
    },
    { additionalProperties: false },
  ),
  { priority: 'LOW', channel: 'email' },
);

/** GET /admin/queues and POST /admin/queues/pause|resume, scope admin. */
export const queueAdminRoutes: RouteModule<CoreDeps & { wakeup: WakeSignal }> = (app, deps) => {
  app.get(
    '/admin/queues',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Depth, oldest age, in-flight count and pause state of every queue',
        description:
          "Depth, oldest age and in-flight count are of every tenant's notifications for admins of tenant `default`, " +
          "of the caller's tenant's only for other admins; a pause holds every tenant.",
        response: { 200: withExample(QueuesBody, queuesExample(false)) },
      },
    },
    async (request) => queuesView(deps.store, deps.clock.now(), visibleTenant(request.principal)),
  );
  for (const action of ['pause', 'resume'] as const) {
    app.post(
      `/admin/queues/${action}`,
      {
        // Queues are shared by every tenant: a tenant's admin must not pause the others.
        config: { scope: 'admin', operatorOnly: true },
        schema: {
          tags: ['admin'],
          summary: `${action === 'pause' ? 'Pause' : 'Resume'} a priority, a channel, both, or everything`,
          description:
            'For every tenant: admins of tenant `default` only (`403` for others). The body names a priority, a channel or both; `{}` (or none) is every queue. Pauses live in the database, so every worker sees them. Answers every queue as GET /admin/queues does.',
          body: Selector,
          response: { 200: withExample(QueuesBody, queuesExample(action === 'pause')) },
        },
        // No body at all means everything, as `{}` does.
        preValidation: async (request) => {
          if (request.body === undefined || request.body === null) request.body = {};
        },
      },
      async (request) => {
        const body = (request.body ?? {}) as { priority?: Priority; channel?: Channel };
        await deps.store.queue.setPaused(
          {
            priority: body.priority === undefined ? undefined : priorityRank(body.priority),
            channel: body.channel,
          },
          action === 'pause',
          deps.clock.now(),
        );
        // A resumed queue should be claimed now, not at the next poll.
        if (action === 'resume') deps.wakeup.notify();
        return queuesView(deps.store, deps.clock.now());
      },
    );
  }
};
