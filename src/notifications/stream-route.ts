import { PassThrough } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { tokenStillValid } from '../auth/bearer.ts';
import type { AccessTokenVerifier } from '../auth/principal.ts';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import type { RouteModule } from '../http/types.ts';
import type { StatusLogStore } from '../store/port/status-log.ts';
import { notificationNotFound } from './read-routes.ts';
import type { StatusHub } from './stream-hub.ts';
import { STREAM_RETRY_MS, TOKEN_ENDED_COMMENT } from './stream-protocol.ts';

/**
 * A client that reads slower than its changes arrive is disconnected once this much waits for
 * it, instead of buffering without bound; it reconnects with Last-Event-ID and is caught up.
 */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** What a stream refused for its tenant's cap is told to wait before it tries again. */
const FULL_RETRY_S = 5;

const StreamQuery = Type.Object(
  {
    notificationId: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        maxItems: 100,
        description: 'Only these notifications (repeatable)',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Resolves when `stream` has passed on what it holds, or has closed. */
function drainedOrClosed(stream: PassThrough): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}

/**
 * Whether a Last-Event-ID is one this log could have sent: a cursor, and not past the log's end.
 * One past the end (a client of a database since restored or wiped) would otherwise be taken as
 * a floor, and the stream would hide every change until the log got there.
 */
async function handedOut(log: StatusLogStore, cursor: string): Promise<boolean> {
  return log.isCursor(cursor) && log.compare(cursor, await log.head()) <= 0;
}

/** A Last-Event-ID the log never handed out is a 400 (handedOut); the live streams' one check of it. */
export async function checkLastEventId(log: StatusLogStore, after: string | undefined): Promise<void> {
  if (after === undefined || (await handedOut(log, after))) return;
  throw new HeraldError('VALIDATION_FAILED', 'Last-Event-ID is not an event id of this stream.', {
    errors: [{ path: 'headers/last-event-id', message: 'must be the id of an event this stream sent' }],
  });
}

/** The request headers and the answer of a live stream (this one and the inbox's), in the OpenAPI document. */
export const streamSchema = (example: string) => ({
  headers: Type.Object({
    'last-event-id': Type.Optional(Type.String({ maxLength: 100, description: 'Resume after this event' })),
  }),
  response: {
    200: {
      description: 'An endless text/event-stream',
      content: { 'text/event-stream': { schema: Type.String(), example } },
    },
  },
});

/** GET /notifications/stream: the tenant's status changes as Server-Sent Events (docs/callbacks.md). */
export const notificationStreamRoute: RouteModule<
  CoreDeps & { statusHub: StatusHub; verifier: AccessTokenVerifier }
> = (app, deps) => {
  // Each open stream, with what lets go of its heartbeat, its subscription and its tenant's count.
  const open = new Map<PassThrough, () => void>();
  // Open streams by tenant: each costs the process a little on every change of its tenant, so
  // one tenant holding thousands would slow the requests of every other (HERALD_STREAMS_PER_TENANT).
  const perTenant = new Map<string, number>();
  // Streams never end on their own: end them before the server waits for its connections, and
  // let go of each at once rather than on its 'close', which never comes to a stream whose
  // reader has stopped reading (its end is never read).
  app.addHook('preClose', async () => {
    for (const [stream, release] of open) {
      stream.end();
      release();
    }
  });

  app.get(
    '/notifications/stream',
    {
      config: { scope: 'notifications:read' },
      schema: {
        tags: ['notifications'],
        summary: 'Live status changes (Server-Sent Events), resumable with Last-Event-ID',
        description:
          "One `status` event per status change of the caller's notifications (`data`: a StatusChange, `id`: an opaque cursor), one `workflow.run` event per status change of its workflow runs (`data`: { runId, workflow, version, recipientId, status, previousStatus, at }, the same cursors), and a comment line at least every 15 s. With `notificationId`, only those notifications' changes (no run's); an id that is not a notification of the caller's tenant gets 404. The stream ends once its access token has expired or its signing key has been removed (checked with each comment line); reconnect with a new token. A reconnect with `Last-Event-ID` first gets every change missed in the last 24 hours, with no gap and no duplicate; an id the stream never sent, or one past the end of the log, gets 400. A tenant holds at most HERALD_STREAMS_PER_TENANT streams (200) open on one server; one more gets 429 with Retry-After. See docs/callbacks.md (Live stream).",
        querystring: StreamQuery,
        ...streamSchema(
          'event: status\nid: c3Q6MTIzNA\ndata: {"notificationId":"019b76da-a800-70e3-aa1e-88b1e3a76f06","status":"DELIVERED","previousStatus":"SENT","event":{"type":"DELIVERED","at":"2026-11-28T09:30:00.012Z","provider":"sandbox","source":"provider"},"metadata":{"userId":"u_42"}}\n\n',
        ),
      },
    },
    async (request, reply) => {
      const after = request.headers['last-event-id'];
      await checkLastEventId(deps.store.statusLog, after);
      const { tenant } = request.principal;
      const ids = request.query.notificationId;
      if (ids !== undefined && ids.length > 0) {
        // As GET /notifications/{id}: an unknown id, or another tenant's, is 404, not a stream
        // that stays silent forever.
        const found = await deps.store.notifications.existing(tenant, ids);
        const missing = ids.findIndex((id) => !found.has(id));
        if (missing >= 0) {
          throw ids.length === 1
            ? notificationNotFound()
            : new HeraldError(
                'NOT_FOUND',
                `No such notification: notificationId number ${missing + 1} of ${ids.length}.`,
              );
        }
      }
      const held = perTenant.get(tenant) ?? 0;
      if (held >= deps.config.streamsPerTenant) {
        throw new HeraldError(
          'RATE_LIMITED',
          `This tenant already has ${held} live streams open on this server; close one first.`,
          { retryAfterS: FULL_RETRY_S },
        );
      }
      perTenant.set(tenant, held + 1);
      const stream = new PassThrough();
      let stop: (() => void) | undefined;
      // A comment line at least every HERALD_STREAM_HEARTBEAT_MS (15 s; docs/callbacks.md), so
      // proxies and clients see the stream is alive. The access token is checked again before
      // each: the stream ends within that time of the token's expiry (or its signing key's
      // removal), as a new request with it would get 401, and the client reconnects with a new token.
      const heartbeat = setInterval(async () => {
        const valid = await tokenStillValid(request, deps.verifier);
        if (stream.destroyed || stream.writableEnded) return;
        if (valid) stream.write(': ping\n\n');
        else stream.end(`${TOKEN_ENDED_COMMENT}\n\n`);
      }, deps.config.streamHeartbeatMs);
      const release = () => {
        if (!open.delete(stream)) return;
        clearInterval(heartbeat);
        const left = (perTenant.get(tenant) ?? 1) - 1;
        if (left > 0) perTenant.set(tenant, left);
        else perTenant.delete(tenant);
        stop?.();
        stop = undefined;
      };
      open.set(stream, release);
      stream.on('close', release);
      reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-store, no-transform')
        // Tells nginx-style proxies not to buffer the stream.
        .header('x-accel-buffering', 'no');
      stream.write(`retry: ${STREAM_RETRY_MS}\n: connected\n\n`);
      // The schema documents the text; what is sent is the stream that writes it.
      reply.send(stream as unknown as string);
      deps.statusHub
        .subscribe({
          tenant,
          notificationIds: ids && new Set(ids),
          after,
          send(frames) {
            if (stream.writableLength > MAX_BUFFERED_BYTES) stream.destroy();
            else stream.write(frames);
          },
          taken: () => (stream.writableNeedDrain && !stream.destroyed ? drainedOrClosed(stream) : undefined),
          get closed() {
            return stream.destroyed;
          },
        })
        .then(
          (unsubscribe) => {
            if (!open.has(stream) || stream.destroyed || stream.writableEnded) unsubscribe();
            else stop = unsubscribe;
          },
          (error) => {
            request.log.warn({ err: error }, 'status stream could not start');
            stream.destroy();
          },
        );
      return reply;
    },
  );
};
