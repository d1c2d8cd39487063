import { requireRoute } from '../lib/api.ts';
import { notification } from '../lib/bodies.ts';
import { deploy } from '../lib/deploy.ts';
import type { BenchOptions } from '../lib/options.ts';
import { startPeer } from '../lib/peer.ts';
import { measured, type Row } from '../lib/report.ts';
import { alternate, shedNote } from '../lib/rounds.ts';
import { median } from '../lib/stats.ts';
import type { Scenario } from './types.ts';

/** The issuer every benched Herald signs with (bench/lib/herald.ts) and the default audience. */
const ISSUER = 'http://herald-bench.local';
const AUDIENCE = 'herald-api';

/**
 * POST /notifications on Herald (`npm start`, every role, the worker draining) against the
 * Fastify + jose + BullMQ peer (its worker draining too), in alternating rounds with the same
 * body, the same token (the peer verifies with Herald's key set) and 64 connections.
 */
async function run(options: BenchOptions): Promise<Row[]> {
  const { ingest, rounds } = options.sizes;
  const herald = await deploy('sqlite');
  try {
    const jwks = await (await fetch(`${herald.urls[0]}/.well-known/jwks.json`)).json();
    const peer = await startPeer({ jwks, issuer: ISSUER, audience: AUDIENCE });
    try {
      await requireRoute(herald.api, 'POST', '/notifications', notification(), 'the notifications API');
      const load = {
        method: 'POST' as const,
        path: '/notifications',
        headers: herald.api.auth,
        body: JSON.stringify(notification()),
        connections: ingest.connections,
      };
      const result = await alternate(
        'peer',
        rounds,
        ingest.warmup,
        ingest.round,
        { ...load, urls: herald.urls },
        { ...load, urls: [peer.url] },
        { herald: 201, reference: 201 },
        'peer',
      );
      const heraldRps = median(result.herald.map((r) => r.rps));
      const peerRps = median(result.reference.map((r) => r.rps));
      return [
        measured('peer', 'ingest: Herald requests/s ratio to the BullMQ peer', median(result.ratios), 'x', {
          target: { bound: 5, better: 'higher', text: '>= 5' },
          note:
            `median of ${rounds} alternating rounds, ${ingest.connections} connections, one token for both; ` +
            `per round: ${result.ratios.map((r) => r.toFixed(2)).join(', ')}; Herald: npm start, every role, ` +
            `its worker draining; peer: Fastify + jose (no verify cache) + BullMQ on ${peer.redis}, its worker draining` +
            shedNote(result),
        }),
        measured('peer', 'Herald requests/s', heraldRps, '/s'),
        measured('peer', 'peer requests/s', peerRps, '/s'),
        measured('peer', 'peer p99 latency', median(result.reference.map((r) => r.latency.p99)), 'ms'),
      ];
    } finally {
      await peer.stop();
    }
  } finally {
    await herald.stop();
  }
}

export const peerScenario: Scenario = {
  name: 'peer',
  title: 'Herald vs what a user would build: Fastify + jose + BullMQ on Redis (appendfsync always)',
  run,
};
