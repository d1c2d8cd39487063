import type { OutgoingHttpHeaders } from 'node:http';
import { Type } from '@sinclair/typebox';
import { tokenStillValid } from '../auth/bearer.ts';
import { type AccessTokenVerifier, INBOX_SCOPE } from '../auth/principal.ts';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import type { RouteModule } from '../http/types.ts';
import { STREAM_RETRY_MS } from '../notifications/stream-protocol.ts';
import { handedOut } from '../notifications/stream-route.ts';
import type { InboxHub, InboxStream } from './hub.ts';
import { recipientOf } from './routes.ts';

/**
 * A client that reads slower than its inbox changes is cut once this much waits for it, rather
 * than buffered without bound; it reconnects with Last-Event-ID and is caught up. An inbox moves
 * slowly: this is small, and so is what an idle stream costs.
 */
const MAX_BUFFERED_BYTES = 256 * 1024;
/**
 * Streams one recipient may hold open in one process (a person's tabs and devices): a recipient
 * token is in a page Herald does not control, and each stream holds memory until it ends.
 */
export const STREAMS_PER_RECIPIENT = 20;
/** What a stream refused for that cap is told to wait before it tries again, seconds. */
const FULL_RETRY_S = 5;

/** GET /inbox/stream: a recipient's inbox as Server-Sent Events (docs/inbox-api.md). */
export const inboxStreamRoute: RouteModule<
  CoreDeps & { inboxHub: InboxHub; verifier: AccessTokenVerifier }
> = (app, deps) => {
  // Streams never end on their own: end them before the server waits for its connections.
  app.addHook('preClose', () => deps.inboxHub.close());
  app.get(
    '/inbox/stream',
    {
      config: { scope: INBOX_SCOPE },
      schema: {
        tags: ['inbox'],
        summary: "The recipient's inbox, live (Server-Sent Events), resumable with Last-Event-ID",
        description:
          'Scope inbox. `event: message` with the item when a message arrives, `event: counts` with `{ unread, unseen }` when they change (and once on connecting), `id:` an opaque cursor, and a comment line at least every 15 s. A reconnect with `Last-Event-ID` first gets every message missed in the last 24 hours, with no gap and no duplicate, then the counts; an id the stream never sent gets 400. A recipient holds at most 20 streams open on one server; one more gets 429 with Retry-After. The stream ends once its token has expired (checked with each comment line): reconnect with a new one. Authenticated by the Authorization header (a browser reads it with fetch, not EventSource). See docs/inbox-api.md.',
        headers: Type.Object({
          'last-event-id': Type.Optional(
            Type.String({ maxLength: 100, description: 'Resume after this event' }),
          ),
        }),
        response: {
          200: {
            description: 'An endless text/event-stream',
            content: {
              'text/event-stream': {
                schema: Type.String(),
                example:
                  'event: message\nid: 1234\ndata: {"id":"019b76da-a800-70e3-aa1e-88b1e3a76f06","title":"Your order shipped","body":"Order 1042 is on its way.","url":null,"data":null,"category":null,"createdAt":"2026-11-28T09:30:00.000Z","seenAt":null,"readAt":null,"archivedAt":null}\n\nevent: counts\nid: 1234\ndata: {"unread":1,"unseen":1}\n\n',
              },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const after = request.headers['last-event-id'];
      if (after !== undefined && !(await handedOut(deps.store.statusLog, after))) {
        throw new HeraldError('VALIDATION_FAILED', 'Last-Event-ID is not an event id of this stream.', {
          errors: [{ path: 'headers/last-event-id', message: 'must be the id of an event this stream sent' }],
        });
      }
      const { tenant, recipientId } = recipientOf(request);
      if (deps.inboxHub.held(tenant, recipientId) >= STREAMS_PER_RECIPIENT) {
        throw new HeraldError(
          'RATE_LIMITED',
          `This recipient already has ${STREAMS_PER_RECIPIENT} inbox streams open on this server; close one first.`,
          { retryAfterS: FULL_RETRY_S },
        );
      }
      // The socket itself, without a stream in between: an idle inbox stream costs its socket,
      // its request and one small entry in the hub.
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        ...(reply.getHeaders() as OutgoingHttpHeaders),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store, no-transform',
        // Tells nginx-style proxies not to buffer the stream.
        'x-accel-buffering': 'no',
      });
      res.write(`retry: ${STREAM_RETRY_MS}\n: connected\n\n`);
      const stream: InboxStream = {
        tenant,
        recipientId,
        write(text) {
          if (res.destroyed) return false;
          if (res.writableLength > MAX_BUFFERED_BYTES) {
            res.destroy();
            return false;
          }
          res.write(text);
          return true;
        },
        end(comment) {
          if (!res.destroyed && !res.writableEnded) res.end(`${comment}\n\n`);
        },
        get closed() {
          return res.destroyed || res.writableEnded;
        },
        stillValid: () => tokenStillValid(request, deps.verifier),
      };
      let stop: (() => void) | undefined;
      let gone = false;
      res.on('close', () => {
        gone = true;
        stop?.();
      });
      deps.inboxHub.subscribe(stream, after).then(
        (unsubscribe) => {
          if (gone) unsubscribe();
          else stop = unsubscribe;
        },
        (error) => {
          request.log.warn({ err: error }, 'inbox stream could not start');
          res.destroy();
        },
      );
    },
  );
};
