import { Type } from '@sinclair/typebox';
import { requireScope } from '../auth/bearer.ts';
import type { Principal } from '../auth/principal.ts';
import { parseIsoTime } from '../clock.ts';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { numericCursor, pageOf } from '../http/page.ts';
import { literals } from '../http/schema.ts';
import type { RouteModule } from '../http/types.ts';
import { CHANNELS, type Channel, PRIORITIES, type Priority, STATUSES, type Status } from './model.ts';
import { addressDigest, type RecipientDigests, searchedAddress } from './recipient-digest.ts';
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
    recipient: Type.Optional(
      Type.String({
        maxLength: 4096,
        description:
          'Scope admin (an extension of the contract). Only notifications to this exact address: an email (compared lower-cased), an E.164 phone (spaces, dots, dashes and brackets ignored), a push endpoint or a device token. Found by its keyed digest, not by reading addresses; notifications accepted before Herald kept digests are not found.',
        examples: ['ada@example.com'],
      }),
    ),
    broadcastId: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'Only the notifications this broadcast made (POST /broadcasts), read through their index: those of the broadcast only are looked at.',
      }),
    ),
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

/**
 * The digest of the searched recipient (admins only: it finds whom a tenant writes to), or
 * undefined when none is searched. 403 before anything about the address is said.
 */
async function searchedDigest(
  digests: RecipientDigests,
  principal: Principal,
  text: string | undefined,
): Promise<string | undefined> {
  if (text === undefined) return undefined;
  requireScope(principal, 'admin', 'Searching by recipient');
  const address = searchedAddress(text);
  if (address === undefined) {
    throw new HeraldError('VALIDATION_FAILED', 'recipient is not an address Herald sends to.', {
      errors: [
        {
          path: 'querystring/recipient',
          message:
            'must be an email address, an E.164 phone number, an https:// push endpoint or a device token',
        },
      ],
    });
  }
  return addressDigest(await digests.tenantKey(principal.tenant), address);
}

/** The cursor is the acceptance sequence of the last item. */
const cursor = numericCursor('s');

/** Another tenant's ID answers exactly like an unknown one. */
export const notificationNotFound = () => new HeraldError('NOT_FOUND', 'No such notification.');

/** Status and list of notifications, always within the caller's tenant. */
export const notificationReadRoutes: RouteModule<CoreDeps & { recipientDigests: RecipientDigests }> = (
  app,
  deps,
) => {
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
          "Follow `nextCursor` until it is null. With a filter, one request looks at 10,000 of the tenant's notifications at most (newest first; `createdAfter` and `createdBefore` first narrow that to where notifications of those times are), so a page may hold fewer items than `limit`, or none, and still have a next cursor. `recipient` (scope admin, an extension of the contract; 403 without it) lists the notifications to one exact address, found through its keyed digest (those to it only are looked at), and combines with the other filters; a malformed address is 400.",
        querystring: ListQuery,
        response: { 200: NotificationPage },
      },
    },
    async (request) => {
      const q = request.query;
      const limit = q.limit ?? 50;
      const recipientDigest = await searchedDigest(deps.recipientDigests, request.principal, q.recipient);
      const { items, scannedTo } = await store.notifications.list(
        request.principal.tenant,
        {
          recipientDigest,
          broadcastId: q.broadcastId,
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
