import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http';
import type { FastifyServerOptions } from 'fastify';
import { frameworkError, tooLarge } from './error-handler.ts';
import { PROBLEM_JSON, problem } from './problem.ts';

/**
 * Limits every port sets on its HTTP server, so no client can hold a connection open for free:
 * a request's headers and body must arrive within `requestTimeoutMs` (HERALD_REQUEST_TIMEOUT_MS),
 * checked every second rather than Node's default 30 s, and idle keep-alive sockets and the
 * number of open connections are bounded.
 */
export function serverLimits(requestTimeoutMs: number): FastifyServerOptions {
  // Fastify hands `http` to http.createServer; its types only name it for the HTTP/1 factory.
  const http: ServerOptions = {
    headersTimeout: requestTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, requestTimeoutMs),
  };
  return {
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: Math.min(KEEP_ALIVE_MS, requestTimeoutMs),
    // Errors before routing (an undecodable path) answer problem+json too.
    frameworkErrors: frameworkError,
    // The router's default (100 characters) refused ordinary one-click unsubscribe tokens, which
    // grow with the address (in tenant `default`, one of 24 characters or more passes 100).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    ...({ http } as FastifyServerOptions),
  };
}

/** The longest path segment the router takes as a parameter: an unsubscribe token's limit. */
export const MAX_PARAM_LENGTH = 4096;
/** Idle keep-alive sockets close after this long. */
const KEEP_ALIVE_MS = 5_000;
/**
 * Open connections one process serves at once; more are refused by the kernel's backlog. Room
 * for 10,000 open inbox streams (issue 51) and the requests beside them: at 10,000 exactly, the
 * streams alone filled it and every other connection was dropped.
 */
const MAX_CONNECTIONS = 16_384;

/**
 * What a port's server gets once built: a cap on open connections, and its own answer to
 * `Expect: 100-continue`: a body announced larger than the route's limit gets 413
 * problem+json at once, before the client uploads it (Node would otherwise send
 * `100 Continue` on its own, take the whole upload, and only then refuse it). Otherwise it
 * sends `100 Continue` and hands the request to the app as usual.
 */
export function hardenServer(server: Server, limitFor: (method: string, url: string) => number): void {
  server.maxConnections = MAX_CONNECTIONS;
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    const length = Number(request.headers['content-length']);
    const limit = limitFor(request.method ?? 'POST', request.url ?? '/');
    if (Number.isFinite(length) && length > limit) {
      const body = JSON.stringify(problem('PAYLOAD_TOO_LARGE', tooLarge(limit)));
      response.writeHead(413, {
        'content-type': PROBLEM_JSON,
        connection: 'close',
        'x-content-type-options': 'nosniff',
      });
      response.end(body);
      return;
    }
    response.writeContinue();
    server.emit('request', request, response);
  });
}
