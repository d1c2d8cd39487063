import { INBOX_SCOPE, RECIPIENT_SUB_PREFIX } from '../auth/principal.ts';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import { type Cursor, pageOf, textCursor } from '../http/page.ts';
import type { App, RouteModule } from '../http/types.ts';
import type { InboxAction, InboxPosition } from '../store/port/inbox.ts';
import type { InboxHub } from './hub.ts';
import {
  countsView,
  InboxCountsView,
  InboxItem,
  InboxPage,
  InboxQuery,
  itemView,
  MessageParams,
  Updated,
} from './schemas.ts';

/** What the inbox routes are built from. */
export type InboxRouteDeps = CoreDeps & { inboxHub: InboxHub };

const inbox = { scope: INBOX_SCOPE };

/** Whose inbox a request reaches: the recipient its token names (bearer.ts let only recipient tokens through). */
export function recipientOf(request: { principal: { sub: string; tenant: string } }): {
  tenant: string;
  recipientId: string;
} {
  return {
    tenant: request.principal.tenant,
    recipientId: request.principal.sub.slice(RECIPIENT_SUB_PREFIX.length),
  };
}

const messageNotFound = () => new HeraldError('NOT_FOUND', 'No such message in this inbox.');

/** A page's position, `<createdAt>:<id>`, in a tagged cursor like every list's (http/page.ts). */
const text = textCursor('i', /^\d{1,15}:[\w-]{1,100}$/);
const cursor: Cursor<InboxPosition> = {
  encode: (p) => text.encode(`${p.createdAt}:${p.id}`),
  decode(value) {
    const key = text.decode(value);
    if (key === undefined) return undefined;
    const at = key.indexOf(':');
    return { createdAt: Number(key.slice(0, at)), id: key.slice(at + 1) };
  },
};

const ACTIONS: ReadonlyArray<{ action: InboxAction; summary: string }> = [
  { action: 'seen', summary: 'Mark a message seen' },
  { action: 'read', summary: 'Mark a message read (and seen)' },
  { action: 'unread', summary: 'Mark a message unread' },
  { action: 'archive', summary: 'Archive a message' },
  { action: 'unarchive', summary: 'Bring a message back from the archive' },
];

/**
 * /inbox (docs/inbox-api.md): a recipient's messages, newest first, its counts and the actions on
 * them, with a recipient token (scope `inbox`). The recipient is the token's; another recipient's
 * message is unknown (404). The live stream is stream-route.ts.
 */
export const inboxRoutes: RouteModule<InboxRouteDeps> = (app, deps) => {
  const { store, clock } = deps;

  app.get(
    '/inbox',
    {
      config: inbox,
      schema: {
        tags: ['inbox'],
        summary: "The recipient's messages, newest first, with its counts",
        description:
          'Scope inbox (a recipient token). `filter`: `all` (the default) leaves archived messages out, `unread` and `unseen` likewise, `archived` lists only them. Follow `nextCursor` until it is null. `unread` and `unseen` count the whole inbox, archived messages left out.',
        querystring: InboxQuery,
        response: { 200: InboxPage },
      },
    },
    async (request) => {
      const { tenant, recipientId } = recipientOf(request);
      const limit = request.query.limit ?? 20;
      const [rows, counts] = await Promise.all([
        store.inbox.list(tenant, recipientId, {
          filter: request.query.filter ?? 'all',
          limit: limit + 1,
          after: cursor.decode(request.query.cursor),
        }),
        store.inbox.counts(tenant, recipientId),
      ]);
      const { page, nextCursor } = pageOf(rows, limit, cursor, (m) => ({ createdAt: m.createdAt, id: m.id }));
      return { items: page.map(itemView), nextCursor, ...countsView(counts) };
    },
  );

  app.get(
    '/inbox/counts',
    {
      config: inbox,
      schema: {
        tags: ['inbox'],
        summary: "The recipient's unread and unseen counts",
        description: 'Scope inbox. Archived messages count neither as unread nor as unseen.',
        response: { 200: InboxCountsView },
      },
    },
    async (request) => {
      const { tenant, recipientId } = recipientOf(request);
      return countsView(await store.inbox.counts(tenant, recipientId));
    },
  );

  for (const { action, summary } of ACTIONS) actionRoute(app, deps, action, summary);

  for (const action of ['seen', 'read'] as const) {
    app.post(
      `/inbox/${action}-all`,
      {
        config: inbox,
        schema: {
          tags: ['inbox'],
          summary: `Mark every message ${action}`,
          description: `Scope inbox. Marks every message of the inbox that is not ${action} yet (archived ones included${action === 'read' ? '; reading also marks seen' : ''}), with a ${action === 'read' ? 'READ' : 'SEEN'} event on each; \`updated\` is how many changed. Takes no body.`,
          response: { 200: Updated },
        },
      },
      async (request) => {
        const { tenant, recipientId } = recipientOf(request);
        const updated = await store.inbox.actAll(tenant, recipientId, action, clock.now());
        if (updated > 0) deps.inboxHub.countsChanged(tenant, recipientId);
        return { updated };
      },
    );
  }
};

function actionRoute(app: App, deps: InboxRouteDeps, action: InboxAction, summary: string): void {
  app.post(
    `/inbox/:id/${action}`,
    {
      config: inbox,
      schema: {
        tags: ['inbox'],
        summary,
        description: `Scope inbox. Answers the message as it is now; a message already ${action === 'unread' ? 'unread' : action === 'unarchive' ? 'out of the archive' : `${action === 'archive' ? 'archived' : action}`} is answered unchanged. 404 for an ID that is not a message of this inbox (another recipient's included). Takes no body.`,
        params: MessageParams,
        response: { 200: InboxItem },
      },
    },
    async (request) => {
      const { tenant, recipientId } = recipientOf(request);
      const result = await deps.store.inbox.act(
        tenant,
        recipientId,
        request.params.id,
        action,
        deps.clock.now(),
      );
      if (!result) throw messageNotFound();
      // The streams of this process see the new counts at once; every process's (this one's too)
      // get them again from the status log: SEEN, READ, ARCHIVED, or INBOX_COUNTS for unread and
      // unarchive, which have no event of the contract (inbox/actions.ts).
      if (result.changed) deps.inboxHub.countsChanged(tenant, recipientId);
      return itemView(result.message);
    },
  );
}
