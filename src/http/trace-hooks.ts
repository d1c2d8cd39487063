import { propagation, ROOT_CONTEXT, type Span, SpanStatusCode } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SpanKind, startSpan, tracingOn } from '../tracing/tracer.ts';

/** Each traced request's server span, until its answer ends it (a property, not a WeakMap: decision 0056). */
const SPAN = Symbol('herald.span');
type Traced = FastifyRequest & { [SPAN]?: Span };

/**
 * The request's server span, undefined when it is not traced: what a handler passes down to
 * what it stores (the trace context) or records (the commit event). Passed by hand, not through
 * an active context: no thread runs a context manager, for AsyncLocalStorage's promise hooks
 * cost every promise of every request (decision 0044).
 */
export const requestSpan = (request: FastifyRequest): Span | undefined => (request as Traced)[SPAN];

/**
 * A SERVER span for each request of the app (docs/tracing.md), continuing an incoming
 * `traceparent`: named by the method and the route's template (`POST /notifications`), never the
 * URL, with the HTTP semantic conventions' attributes and the path without its query string.
 * The handler reads it with `requestSpan` for what it stores or records in the span's name.
 * Installed only when tracing is on.
 */
export function installTraceHooks(app: FastifyInstance): void {
  if (!tracingOn()) return;
  // The port the app answers on, read once: `socket.localPort` is a getsockname() call each time.
  let port: number | undefined;
  app.addHook('onRequest', (request, reply, done) => {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const route = request.routeOptions.url;
    const query = request.url.indexOf('?');
    const path = query === -1 ? request.url : request.url.slice(0, query);
    port ??= request.socket.localPort ?? 0;
    // Each attribute set on the span, no object built for them.
    const span = startSpan(
      route === undefined ? request.method : `${request.method} ${route}`,
      SERVER,
      parent,
    );
    span.setAttribute('http.request.method', request.method);
    span.setAttribute('url.path', path);
    span.setAttribute('url.scheme', 'http');
    if (route !== undefined) span.setAttribute('http.route', route);
    span.setAttribute('network.protocol.version', request.raw.httpVersion);
    span.setAttribute('server.port', port);
    (request as Traced)[SPAN] = span;
    // A client that leaves after its request was read, before the answer: neither onResponse nor
    // onRequestAbort (only for a request cut short) runs, and the span would never end nor be
    // exported, though the handler ran (a notification it accepted is still processed). A
    // response closes once: `on`, without the wrapper `once` makes.
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) endAborted(request);
    });
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = requestSpan(request);
    if (span !== undefined) {
      (request as Traced)[SPAN] = undefined;
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) {
        span.setAttribute('error.type', String(reply.statusCode));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    }
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    endAborted(request);
    done();
  });
}

/** A request's span: its kind (its attributes are set one by one on the span). */
const SERVER = { kind: SpanKind.SERVER };

/** Ends a request's span, if still open, as one its client left before the answer. */
function endAborted(request: FastifyRequest): void {
  const span = requestSpan(request);
  if (span === undefined) return;
  (request as Traced)[SPAN] = undefined;
  span.setAttribute('error.type', 'aborted');
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
