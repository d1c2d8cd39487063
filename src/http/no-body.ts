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
 * An onRoute hook for the protected routes: one that writes and declares no body schema (a
 * cancel, a redrive, a rotation, signing out everywhere) refuses a body with fields in it with
 * `400` instead of ignoring what the caller meant to say, as every other route refuses an unknown
 * field (the README's errors paragraph). No body, `null` and `{}` stay accepted.
 */
export function refuseBodyWhereNoneIsTaken(route: RouteOptions): void {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (route.schema?.body !== undefined || !methods.some((m) => WRITES.has(m))) return;
  const before = route.preValidation;
  route.preValidation = [
    ...(before === undefined ? [] : Array.isArray(before) ? before : [before]),
    refuseContent,
  ];
}
