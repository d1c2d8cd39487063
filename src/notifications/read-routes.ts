import { Type } from '@sinclair/typebox';
import { HeraldError } from '../http/errors.ts';
import type { RouteModule } from '../http/types.ts';
import { CHANNELS, type Channel, PRIORITIES, type Priority, STATUSES, type Status } from './model.ts';
import { detailView, etagOf, matchesEtag, summaryView } from './view.ts';

// No length bound here: any unknown ID, however long, answers 404 like every other unknown one.
const Id = Type.Object({ id: Type.String({ minLength: 1 }) });
const literals = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));
const ListQuery = Type.Object(
  {
    status: Type.Optional(literals(STATUSES)),
    priority: Type.Optional(literals(PRIORITIES)),
    channel: Type.Optional(literals(CHANNELS)),
    createdAfter: Type.Optional(Type.String({ maxLength: 40 })),
    createdBefore: Type.Optional(Type.String({ maxLength: 40 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

function time(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) {
    throw new HeraldError('VALIDATION_FAILED', `${name} is not a valid time.`, {
      errors: [{ path: `querystring/${name}`, message: 'must be an ISO 8601 time' }],
    });
  }
  return ms;
}

/** The cursor is opaque to clients: the acceptance sequence of the last item, wrapped. */
const encodeCursor = (seq: number) => Buffer.from(`s:${seq}`).toString('base64url');
function decodeCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const match = /^s:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match) {
    throw new HeraldError('VALIDATION_FAILED', 'The cursor is invalid.', {
      errors: [{ path: 'querystring/cursor', message: 'use the nextCursor of a previous page' }],
    });
  }
  return Number(match[1]);
}

const notFound = () => new HeraldError('NOT_FOUND', 'No such notification.');

/** Status, list, cancel and redrive of notifications, always within the caller's tenant. */
export const notificationReadRoutes: RouteModule = (app, deps) => {
  const { store, clock } = deps;

  app.get(
    '/notifications/:id',
    {
      config: { scope: 'notifications:read' },
      schema: { tags: ['notifications'], summary: 'Status and events; ETag for cheap polling', params: Id },
    },
    async (request, reply) => {
      const found = await store.notifications.get(request.principal.tenant, request.params.id);
      // Another tenant's ID answers exactly like an unknown one.
      if (!found) throw notFound();
      const body = detailView(found.record, found.events);
      const etag = etagOf(body);
      reply.header('etag', etag).header('cache-control', 'private, no-cache');
      if (matchesEtag(request.headers['if-none-match'], etag)) return reply.code(304).send();
      return body;
    },
  );

  app.get(
    '/notifications',
    {
      config: { scope: 'notifications:read' },
      schema: {
        tags: ['notifications'],
        summary: 'Newest first, filtered, cursor-paginated',
        querystring: ListQuery,
      },
    },
    async (request) => {
      const q = request.query;
      const limit = q.limit ?? 50;
      const items = await store.notifications.list(
        request.principal.tenant,
        {
          status: q.status as Status | undefined,
          priority: q.priority as Priority | undefined,
          channel: q.channel as Channel | undefined,
          createdAfter: time('createdAfter', q.createdAfter),
          createdBefore: time('createdBefore', q.createdBefore),
          beforeSeq: decodeCursor(q.cursor),
        },
        limit + 1,
      );
      const page = items.slice(0, limit);
      const last = page[page.length - 1];
      return {
        items: page.map(summaryView),
        nextCursor: items.length > limit && last ? encodeCursor(last.seq) : null,
      };
    },
  );

  const action = (path: string, scope: string, summary: string, run: 'cancel' | 'redrive', wrong: string) =>
    app.post(
      path,
      { config: { scope }, schema: { tags: ['notifications'], summary, params: Id } },
      async (request) => {
        const { tenant } = request.principal;
        const outcome = await store.notifications[run](tenant, request.params.id, clock.now());
        if (outcome === 'not_found') throw notFound();
        if (outcome === 'invalid_state') throw new HeraldError('INVALID_STATE', wrong);
        if (run === 'redrive') deps.wakeup.notify();
        const found = await store.notifications.get(tenant, request.params.id);
        if (!found) throw notFound();
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
