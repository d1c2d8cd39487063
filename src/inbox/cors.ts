import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CoreDeps } from '../deps.ts';
import { HeraldError } from '../errors.ts';
import type { RouteModule } from '../http/types.ts';

/** The inbox endpoints: `/inbox` and everything under it, the stream included. */
const INBOX_PATH = /^\/inbox(?:[/?]|$)/;
/** How long a browser may keep a preflight's answer, seconds. */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * CORS for the inbox endpoints only (docs/inbox-api.md#cors): a browser on one of the origins in
 * HERALD_INBOX_ORIGINS may call them with its recipient token in the Authorization header (and
 * resume the stream with Last-Event-ID). A preflight from any other origin is refused with 403;
 * a request from one gets no CORS header, so its browser does not let the page read the answer.
 * No other endpoint answers CORS: no header, and OPTIONS elsewhere is what it always was.
 */
export const inboxCorsRoutes: RouteModule<CoreDeps> = (app, deps) => {
  // Origins as browsers send them (RFC 6454 serialisation: lower case, no default port).
  const allowed = new Set((deps.config.inboxOrigins ?? []).map((origin) => new URL(origin).origin));
  const allowedOrigin = (request: FastifyRequest): string | undefined => {
    const origin = request.headers.origin;
    return origin !== undefined && allowed.has(origin) ? origin : undefined;
  };

  // Before authentication, so that a 401 or 403 reaches the page as such, not as a CORS failure.
  app.addHook('onRequest', async (request, reply) => {
    if (!INBOX_PATH.test(request.url)) return;
    reply.header('vary', 'Origin');
    const origin = allowedOrigin(request);
    if (origin === undefined) return;
    reply
      .header('access-control-allow-origin', origin)
      .header('access-control-expose-headers', 'WWW-Authenticate, Retry-After, X-Request-Id');
  });

  const preflight = async (request: FastifyRequest, reply: FastifyReply) => {
    if (allowedOrigin(request) === undefined) {
      throw new HeraldError(
        'FORBIDDEN',
        request.headers.origin === undefined
          ? 'A CORS preflight needs an Origin header.'
          : 'This origin may not call the inbox: it is not listed in HERALD_INBOX_ORIGINS.',
      );
    }
    return reply
      .code(204)
      .header('access-control-allow-methods', 'GET, POST')
      .header('access-control-allow-headers', 'Authorization, Last-Event-ID, Content-Type')
      .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_S))
      .send();
  };
  for (const url of ['/inbox', '/inbox/*']) app.options(url, { schema: { hide: true } }, preflight);
};
