import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem } from '../http/problem.ts';

/**
 * Request headers the client may not choose: the gateway states the client's address itself,
 * and cookies never travel (Herald has no cookie; dropping them keeps a browser's cookies for
 * other apps on the same host away from the API).
 */
const CLIENT_CONTROLLED = ['forwarded', 'x-real-ip', 'x-forwarded-host', 'x-forwarded-port', 'cookie'];

/**
 * Rewrites the headers sent upstream. Any `X-Forwarded-For` the client sent is replaced (not
 * appended to) with the socket's peer address, so the auth service's login throttling counts the
 * real client and cannot be dodged by a forged header.
 */
export function upstreamRequestHeaders(
  request: Pick<FastifyRequest, 'socket' | 'ip' | 'protocol'>,
  headers: IncomingHttpHeaders,
) {
  const out: IncomingHttpHeaders = { ...headers };
  for (const name of CLIENT_CONTROLLED) delete out[name];
  out['x-forwarded-for'] = request.socket.remoteAddress ?? request.ip;
  out['x-forwarded-proto'] = request.protocol;
  return out;
}

/** Response headers from upstream, minus any cookie: the gateway sets none and passes none on. */
export function downstreamHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out = { ...headers };
  delete out['set-cookie'];
  return out;
}

const TIMEOUT_CODES = new Set([
  'FST_REPLY_FROM_GATEWAY_TIMEOUT',
  'FST_REPLY_FROM_TIMEOUT',
  'FST_REPLY_FROM_HTTP_REQUEST_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/**
 * A failed upstream hop as problem+json: a timeout is 504, anything else (refused, reset, bad
 * answer, unknown host) is 502. The cause is logged, never sent.
 */
export function upstreamError(reply: FastifyReply, error: Error & { code?: string; cause?: unknown }) {
  const cause = error.cause as { code?: string } | undefined;
  const timedOut = TIMEOUT_CODES.has(error.code ?? '') || TIMEOUT_CODES.has(cause?.code ?? '');
  reply.request.log.warn({ code: error.code, cause: cause?.code }, 'upstream request failed');
  if (reply.sent) return;
  // reply-from may already have copied nothing; make sure no upstream header leaks into the problem.
  reply.removeHeader('content-length');
  if (timedOut) {
    sendProblem(reply, 'GATEWAY_TIMEOUT', 'The upstream service did not answer in time.');
  } else {
    sendProblem(reply, 'BAD_GATEWAY', 'The upstream service is unreachable.');
  }
}
