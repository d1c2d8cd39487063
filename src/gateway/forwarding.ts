import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem } from '../http/problem.ts';

/**
 * Headers that describe one connection, not the message (RFC 9110 §7.6.1): never forwarded in
 * either direction, nor the headers the `Connection` header names. `te: trailers` may pass.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
  'trailer',
]);

/**
 * Request headers the client may not choose: the gateway states the client's address itself and
 * the upstream's host; cookies never travel (Herald has no cookie; dropping them keeps a
 * browser's cookies for other apps on the same host away from the API); the body is read whole,
 * so its length is the gateway's to state and there is nothing to `Expect`.
 */
const NOT_FORWARDED = new Set([
  ...HOP_BY_HOP,
  'forwarded',
  'x-real-ip',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-port',
  'x-forwarded-proto',
  'cookie',
  'host',
  'content-length',
  'expect',
]);

/** Response headers the gateway never passes on: it sets no cookie. */
const NOT_RETURNED = new Set([...HOP_BY_HOP, 'set-cookie']);

/** The headers a `Connection` header names, when there is one. */
function connectionNamed(headers: IncomingHttpHeaders): string[] | undefined {
  const value = headers.connection;
  if (!value) return undefined;
  return value
    .toLowerCase()
    .split(',')
    .map((name) => name.trim());
}

/** `headers` without those in `skip` or named by `Connection`; `te` only as `trailers`. */
function filtered(headers: IncomingHttpHeaders, skip: ReadonlySet<string>): IncomingHttpHeaders {
  const named = connectionNamed(headers);
  const out: IncomingHttpHeaders = {};
  for (const name in headers) {
    if (skip.has(name) || named?.includes(name)) continue;
    const value = headers[name];
    if (name === 'te' && value !== 'trailers') continue;
    out[name] = value;
  }
  return out;
}

/**
 * The headers sent upstream. Any `X-Forwarded-For` the client sent is replaced (not appended to)
 * with the socket's peer address, so the auth service's login throttling counts the real client
 * and cannot be dodged by a forged header.
 */
export function upstreamRequestHeaders(
  request: Pick<FastifyRequest, 'socket' | 'ip' | 'protocol' | 'headers'>,
  host: string,
  bodyLength: number | undefined,
): IncomingHttpHeaders {
  const out = filtered(request.headers, NOT_FORWARDED);
  out.host = host;
  out['x-forwarded-for'] = request.socket.remoteAddress ?? request.ip;
  out['x-forwarded-proto'] = request.protocol;
  if (bodyLength !== undefined) out['content-length'] = String(bodyLength);
  return out;
}

/** Response headers from upstream as the client gets them. */
export function downstreamHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return filtered(headers, NOT_RETURNED);
}

/** Why the gateway gave up on an upstream request. */
export class HopError extends Error {
  constructor(
    readonly code: 'HOP_CONNECT_TIMEOUT' | 'HOP_TIMEOUT' | 'HOP_BAD_ANSWER',
    message: string,
  ) {
    super(message);
  }
}

const TIMEOUT_CODES = new Set(['HOP_CONNECT_TIMEOUT', 'HOP_TIMEOUT']);

/**
 * A failed upstream hop as problem+json: a timeout is 504, anything else (refused, reset, bad
 * answer, unknown host) is 502. The cause is logged, never sent. Once the answer has begun, the
 * client's connection is cut instead (its body is incomplete).
 */
export function upstreamError(reply: FastifyReply, error: Error & { code?: string }) {
  if (reply.raw.destroyed) return; // the client went away first: nothing to answer
  reply.request.log.warn({ code: error.code }, 'upstream request failed');
  if (reply.sent || reply.raw.headersSent) {
    reply.raw.destroy();
    return;
  }
  if (TIMEOUT_CODES.has(error.code ?? '')) {
    sendProblem(reply, 'GATEWAY_TIMEOUT', 'The upstream service did not answer in time.');
  } else {
    sendProblem(reply, 'BAD_GATEWAY', 'The upstream service is unreachable.');
  }
}
