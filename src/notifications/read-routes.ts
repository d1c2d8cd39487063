import { Type } from '@sinclair/typebox';
import { parseIsoTime } from '../clock.ts';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { numericCursor, pageOf } from '../http/page.ts';
import { literals } from '../http/schema.ts';
import type { RouteModule } from '../http/types.ts';
import { CHANNELS, type Channel, PRIORITIES, type Priority, STATUSES, type Status } from './model.ts';
import { NotificationDetail, NotificationIdParam, NotificationPage } from './schemas.ts';
import { detailView, etagOf, matchesEtag, summaryView } from './view.ts';

const TIME_FILTER = 'ISO 8601 time with a zone (2026-01-01T09:00:00Z), or a date alone (its midnight UTC)';

const ListQuery = Type.Object(
  {
    status: Type.Optional(literals(STATUSES)),
    priority: Type.Optional(literals(PRIORITIES)),
    channel: Type.Optional(literals(CHANNELS)),
    createdAfter: Type.Optional(Type.String({ maxLength: 40, description: TIME_FILTER })),
    createdBefore: Type.Optional(Type.String({ maxLength: 40, description: TIME_FILTER })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

function time(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseIsoTime(value, true);
  if (ms === null) {
    throw new HeraldError('VALIDATION_FAILED', `${name} is not a valid time.`, {
      errors: [
        {
          path: `querystring/${name}`,
          message: `must be an ${TIME_FILTER}`,
        },
      ],
    });
  }
  return ms;
}

/** The cursor is the acceptance sequence of the last item. */
const cursor = numericCursor('s');

/** Another tenant's ID answers exactly like an unknown one. */
export const notificationNotFound = () => new HeraldError('NOT_FOUND', 'No such notification.');

/** Status and list of notifications, always within the caller's tenant. */
export const notificationReadRoutes: RouteModule<CoreDeps> = (app, deps) => {
  const { store } = deps;

  app.get(
    '/notifications/:id',
    {
      config: { scope: 'notifications:read' },
      schema: {
        tags: ['notifications'],
        summary: 'Status and events; ETag for cheap polling',
        description:
          "Scope notifications:read. The notification of the caller's tenant (recipient masked) with every event, oldest first: each attempt, its provider and outcome. Send the answer's ETag back in If-None-Match and an unchanged notification answers 304 with no body. Another tenant's ID is 404.",
        params: NotificationIdParam,
        response: {
          200: NotificationDetail,
          304: { description: 'Unchanged since the ETag in If-None-Match', type: 'null' },
        },
      },
    },
    async (request, reply) => {
      const found = await store.notifications.get(request.principal.tenant, request.params.id);
      if (!found) throw notificationNotFound();
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
        description:
          "Follow `nextCursor` until it is null. With a filter, one request looks at 10,000 of the tenant's notifications at most (newest first; `createdAfter` and `createdBefore` first narrow that to where notifications of those times are), so a page may hold fewer items than `limit`, or none, and still have a next cursor.",
        querystring: ListQuery,
        response: { 200: NotificationPage },
      },
    },
    async (request) => {
      const q = request.query;
      const limit = q.limit ?? 50;
      const { items, scannedTo } = await store.notifications.list(
        request.principal.tenant,
        {
          status: q.status as Status | undefined,
          priority: q.priority as Priority | undefined,
          channel: q.channel as Channel | undefined,
          createdAfter: time('createdAfter', q.createdAfter),
          createdBefore: time('createdBefore', q.createdBefore),
          beforeSeq: cursor.decode(q.cursor),
        },
        limit + 1,
      );
      const { page, nextCursor } = pageOf(items, limit, cursor, (n) => n.seq, scannedTo);
      return { items: page.map(summaryView), nextCursor };
    },
  );
};
