import { requireRoute } from './api.ts';
import { notification } from './bodies.ts';
import type { Deployment } from './deploy.ts';
import type { BenchOptions } from './options.ts';
import { alternate, type Rounds } from './rounds.ts';

/**
 * POST /notifications on Herald and on a reference server (bare Fastify, the peer) in
 * alternating rounds: the same 200-byte body, Herald's token and the ingest connections. Herald
 * is probed first and must answer 201, so a round never measures a refusal.
 */
export async function alternateIngest(
  label: string,
  herald: Deployment,
  referenceUrl: string,
  options: BenchOptions,
  referenceName?: string,
): Promise<Rounds> {
  const { ingest, rounds } = options.sizes;
  const probe = await requireRoute(
    herald.api,
    'POST',
    '/notifications',
    notification(),
    'the notifications API',
  );
  if (probe.status !== 201)
    throw new Error(`POST /notifications: ${probe.status} ${JSON.stringify(probe.body)}`);
  const load = {
    method: 'POST' as const,
    path: '/notifications',
    headers: herald.api.auth,
    body: JSON.stringify(notification()),
    connections: ingest.connections,
  };
  return alternate(
    label,
    rounds,
    ingest.warmup,
    ingest.round,
    { ...load, urls: herald.urls },
    { ...load, urls: [referenceUrl] },
    { herald: 201, reference: 201 },
    referenceName,
  );
}
