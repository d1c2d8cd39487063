import { Readable } from 'node:stream';
import httpProxy from '@fastify/http-proxy';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { downstreamHeaders, upstreamError, upstreamRequestHeaders } from './forwarding.ts';

/** One forwarding rule: requests under `prefix` go to `upstream` + `target` + the rest of the path. */
export interface Route {
  prefix: string;
  upstream: string;
  target: string;
  methods?: string[];
  /** Only the prefix itself, not paths below it (the two session routes). */
  exact?: boolean;
  bodyLimit: number;
}

/** Timeouts and limits of the proxy hop. */
export interface HopOptions {
  /** Longest wait for the upstream's answer headers, and between body chunks. */
  timeoutMs: number;
  connectTimeoutMs: number;
}

/** `http://host:8080/base/` → origin `http://host:8080` and path prefix `/base` (may be empty). */
function splitUrl(url: string): { origin: string; path: string } {
  const parsed = new URL(url);
  return { origin: parsed.origin, path: parsed.pathname.replace(/\/+$/, '') };
}

/**
 * Registers one forwarding rule as a real HTTP hop (@fastify/http-proxy over undici). Bodies are
 * read as raw bytes under the rule's limit and sent on unchanged (never re-encoded), so the
 * upstream validates exactly what the client sent. Nothing is retried: a POST /notifications
 * must not be sent twice by the gateway, and a 503 from the API must reach the client as is.
 */
export async function registerRoute(app: FastifyInstance, route: Route, hop: HopOptions): Promise<void> {
  const { origin, path } = splitUrl(route.upstream);
  await app.register(async (scope) => {
    // The rule's limit is each of its routes' own, so the server's Expect: 100-continue check
    // (http/body-limits.ts) refuses a larger announced body before it is uploaded.
    scope.addHook('onRoute', (options) => {
      options.bodyLimit = route.bodyLimit;
    });
    scope.removeAllContentTypeParsers();
    // Read whole under the limit (a 413 comes from here, before any byte goes upstream), then
    // handed on as a stream: reply-from pipes streams as they are but re-encodes parsed JSON.
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) =>
      done(null, Readable.from([body])),
    );
    await scope.register(httpProxy, {
      upstream: origin,
      prefix: route.prefix,
      rewritePrefix: `${path}${route.target}`,
      routes: route.exact ? ['/'] : ['/', '/*'],
      ...(route.methods ? { httpMethods: route.methods } : {}),
      proxyPayloads: false,
      // Location (e.g. /notifications/{id}) is passed through unchanged, as the contract says.
      internalRewriteLocationHeader: false,
      retryMethods: [],
      disableRequestLogging: true,
      undici: {
        connections: 128,
        headersTimeout: hop.timeoutMs,
        bodyTimeout: hop.timeoutMs,
        connect: { timeout: hop.connectTimeoutMs },
      },
      replyOptions: {
        rewriteRequestHeaders: (request, headers) => upstreamRequestHeaders(request, headers),
        rewriteHeaders: (headers) => downstreamHeaders(headers),
        // reply-from types the reply for any server kind; this one is plain HTTP/1.
        onError: (reply, { error }) => upstreamError(reply as unknown as FastifyReply, error),
        retryDelay: () => null,
      },
    });
  });
}
