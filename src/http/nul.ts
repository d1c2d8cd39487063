import type { FastifyRequest } from 'fastify';
import { HeraldError } from '../errors.ts';
import { NUL_MESSAGE } from './field-messages.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route checks its body for U+0000 itself, item by item (notification ingest: a batch
     * answers 207 with one error per bad item), so the app-wide guard leaves its body alone.
     */
    checksNulInBody?: boolean;
  }
}

/** The path of the first string or key under `value` that holds U+0000, found without recursion. */
export function nulPath(value: unknown, prefix: string): string | undefined {
  const values: unknown[] = [value];
  const paths: string[] = [prefix];
  while (values.length > 0) {
    const current = values.pop();
    const path = paths.pop() as string;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return path;
    } else if (typeof current === 'object' && current !== null && !ArrayBuffer.isView(current)) {
      // (A raw body kept as bytes, as the webhooks keep theirs, is checked by its route.)
      for (const [key, child] of Object.entries(current)) {
        if (key.includes('\u0000')) return path;
        values.push(child);
        paths.push(`${path}/${key}`);
      }
    }
  }
  return undefined;
}

/**
 * No U+0000 in any parameter, query value or JSON body (PostgreSQL text cannot hold it, and no
 * field of the contract needs it): 400 VALIDATION_FAILED naming the field, before the handler
 * runs, on SQLite as on PostgreSQL.
 */
export async function refuseNul(request: FastifyRequest): Promise<void> {
  const path =
    nulPath(request.params, 'params') ??
    nulPath(request.query, 'query') ??
    (request.routeOptions.config.checksNulInBody ? undefined : nulPath(request.body, 'body'));
  if (path !== undefined) {
    throw new HeraldError('VALIDATION_FAILED', 'The request holds a U+0000 character.', {
      errors: [{ path, message: NUL_MESSAGE }],
    });
  }
}
