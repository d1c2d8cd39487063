import type { FastifyRequest, RouteOptions } from 'fastify';
import { HeraldError } from '../errors.ts';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A body with something in it: anything but nothing, `null` and `{}`. */
function hasContent(body: unknown): boolean {
  if (body === undefined || body === null) return false;
  if (typeof body !== 'object' || Array.isArray(body)) return true;
  return Object.keys(body).length > 0;
}

async function refuseContent(request: FastifyRequest): Promise<void> {
  if (!hasContent(request.body)) return;
  throw new HeraldError('VALIDATION_FAILED', 'This request takes no body.', {
    errors: [{ path: 'body', message: 'must be absent or {}' }],
  });
}

/**
 * An empty body needs no parser, whatever type it is announced as: many clients send
 * `Content-Type: application/json` on every POST, and Fastify would parse nothing as JSON and
 * refuse it (`400` "The JSON body is empty"). A request with neither `Content-Length` nor
 * `Transfer-Encoding`, or a length of 0, has none; without the type, Fastify skips parsing.
 */
async function forgetTypeOfEmptyBody(request: FastifyRequest): Promise<void> {
  const { headers } = request;
  const length = headers['content-length'];
  if (headers['transfer-encoding'] === undefined && (length === undefined || length === '0'))
    delete headers['content-type'];
}

const hooksOf = <T>(hooks: T | T[] | undefined): T[] =>
  hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];

/**
 * An onRoute hook for the protected routes: one that writes and declares no body schema (a
 * cancel, a redrive, a rotation, signing out everywhere) refuses a body with fields in it with
 * `400` instead of ignoring what the caller meant to say, as every other route refuses an unknown
 * field (the README's errors paragraph). No body (announced as any type), `null` and `{}` stay
 * accepted.
 */
export function refuseBodyWhereNoneIsTaken(route: RouteOptions): void {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (route.schema?.body !== undefined || !methods.some((m) => WRITES.has(m))) return;
  route.onRequest = [...hooksOf(route.onRequest), forgetTypeOfEmptyBody];
  route.preValidation = [...hooksOf(route.preValidation), refuseContent];
}
