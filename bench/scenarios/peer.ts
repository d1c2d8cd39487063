import { queues } from '../lib/api.ts';
import { notification } from '../lib/bodies.ts';
import { deploy } from '../lib/deploy.ts';
import { fillBacklog } from '../lib/fill.ts';
import { alternateIngest } from '../lib/ingest-rounds.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { runPaced } from '../lib/paced.ts';
import { calledLatencies, type PeerAuth, startPeer } from '../lib/peer.ts';
import { measured, type Row } from '../lib/report.ts';
import { shedNote } from '../lib/rounds.ts';
import { median, percentile, spread } from '../lib/stats.ts';
import { criticalLatencies } from './isolation-latency.ts';
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
  const rows = await ingestRounds(options);
  return [...rows, ...(await criticalUnderBacklog(options))];
}

async function ingestRounds(options: BenchOptions): Promise<Row[]> {
  const { ingest, rounds } = options.sizes;
  const herald = await deploy('sqlite');
  try {
    const peer = await startPeer(await peerAuth(herald.urls[0] as string));
    try {
      const result = await alternateIngest('peer', herald, peer.url, options, 'peer');
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

/** The peer verifies Herald's tokens: Herald's key set, issuer and audience. */
async function peerAuth(heraldUrl: string): Promise<PeerAuth> {
  const jwks = await (await fetch(`${heraldUrl}/.well-known/jwks.json`)).json();
  return { jwks, issuer: ISSUER, audience: AUDIENCE };
}

/**
 * CRITICAL beside a LOW backlog, the same on both: N LOW queued (Herald: the batch endpoint;
 * the peer: BullMQ addBulk), then one CRITICAL POST every `everyMs` from a separate process.
 * Herald drains at its own pace, the peer through BullMQ's rate limiter at 2,000/s (a provider's
 * rate limit, the usual setup). Latency: acceptance to the provider call (Herald: createdAt to
 * the PROCESSING event; the peer: job.timestamp to the null provider's call).
 */
async function criticalUnderBacklog(options: BenchOptions): Promise<Row[]> {
  const { everyMs, forMs } = options.sizes.isolation;
  const backlog = Math.min(options.sizes.isolation.backlog, 200_000);
  const paced = (url: string, auth: Record<string, string>) =>
    runPaced({
      url,
      path: '/notifications',
      headers: auth,
      body: JSON.stringify(notification('CRITICAL')),
      everyMs,
      forMs,
      collect: true,
    });

  const herald = await deploy('sqlite');
  let heraldLatencies: number[];
  let heraldNote: string;
  let auth: PeerAuth;
  try {
    auth = await peerAuth(herald.urls[0] as string);
    await fillBacklog(herald.api, backlog, 'LOW', 'peer: Herald backlog');
    const critical = await paced(herald.urls[0] as string, herald.api.auth);
    const lowLeft = (await queues(herald.api))
      .filter((q) => q.priority === 'LOW')
      .reduce((n, q) => n + q.depth, 0);
    const latencies = await criticalLatencies(herald.api, critical);
    heraldLatencies = latencies.values;
    heraldNote = `Herald ${spread(heraldLatencies)}, ${lowLeft.toLocaleString('en-US')} LOW left at the end`;
  } finally {
    await herald.stop();
  }

  const peer = await startPeer(auth, 'limiter');
  try {
    progress(`peer: queueing ${backlog.toLocaleString('en-US')} LOW in the peer`);
    await peer.preload(backlog, notification('LOW'));
    const critical = await paced(peer.url, herald.api.auth);
    if (critical.accepted.length === 0)
      throw new Error(`peer accepted no CRITICAL: ${critical.failures.join('; ')}`);
    const lowLeft = await peer.lowWaiting();
    const peerLatencies = await calledLatencies(peer, critical.accepted);
    const peerP99 = percentile(peerLatencies, 99);
    const heraldP99 = percentile(heraldLatencies, 99);
    const note =
      `${backlog.toLocaleString('en-US')} LOW queued first, then one CRITICAL every ${everyMs} ms for ${forMs / 1000} s; ` +
      `${heraldNote}; peer ${spread(peerLatencies)} (${peerLatencies.length} of ${critical.accepted.length} reached ` +
      `its provider), ${lowLeft.toLocaleString('en-US')} LOW left at the end`;
    return [
      measured('peer', 'CRITICAL p99 beside a LOW backlog: Herald', heraldP99, 'ms', {
        target: { bound: peerP99, better: 'lower', text: `below the peer's ${peerP99} ms` },
        note,
      }),
      measured('peer', 'CRITICAL p99 beside a LOW backlog: peer', peerP99, 'ms'),
    ];
  } finally {
    await peer.stop();
  }
}

export const peerScenario: Scenario = {
  name: 'peer',
  title: 'Herald vs what a user would build: Fastify + jose + BullMQ on Redis (appendfsync always)',
  run,
};
