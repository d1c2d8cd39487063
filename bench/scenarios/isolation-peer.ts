import { type Api, login, queues } from '../lib/api.ts';
import { notification } from '../lib/bodies.ts';
import { fillBacklog } from '../lib/fill.ts';
import { type HeraldProcess, startHerald } from '../lib/herald.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { runPaced } from '../lib/paced.ts';
import { calledLatencies, type PeerAuth, startPeer } from '../lib/peer.ts';
import { startPgPeer } from '../lib/peer-pg.ts';
import { postgresDatabase } from '../lib/postgres.ts';
import { measured, type Row } from '../lib/report.ts';
import { percentile, spread } from '../lib/stats.ts';
import { sinceAcceptance, viewsWhen } from './isolation-latency.ts';
import type { Scenario } from './types.ts';

/** The issuer every benched Herald signs with (bench/lib/herald.ts) and the default audience. */
const ISSUER = 'http://herald-bench.local';
const AUDIENCE = 'herald-api';

/** As the shared peer bench (compare.sh isolation): 200,000 LOW, then one CRITICAL every 20 ms. */
const BACKLOG = 200_000;
const EVERY_MS = 20;
const FOR_MS = 4000;

type Engine = 'sqlite' | 'postgres';

/** Acceptance to the provider call and to PROCESSING of Herald's CRITICALs, ms. */
interface HeraldLatencies {
  provider: number[];
  processing: number[];
  lowLeft: number;
}

/**
 * Herald as the issue ran it: `npm start` (every role in one process), on SQLite or with
 * DATABASE_URL. Its 200,000 LOW go in through the batch endpoint while its worker drains them;
 * then the CRITICALs. Acceptance to the provider call is the SENT event (or DELIVERED, when no
 * SENT precedes it) minus createdAt, as compare.sh takes it: the sandbox answers at once, and the
 * event is written when the worker writes its completion, so the figure counts that write too.
 */
async function heraldBesideDrain(
  engine: Engine,
  sizes: { backlog: number; forMs: number },
): Promise<HeraldLatencies & { auth: PeerAuth; token: Api['auth'] }> {
  const env: Record<string, string> = engine === 'postgres' ? { DATABASE_URL: await postgresDatabase() } : {};
  // Where its CRITICALs' time goes (bench/urgent-trace.ts reads the file): one file per database.
  const trace = process.env.HERALD_DISPATCH_TRACE;
  if (trace) env.HERALD_DISPATCH_TRACE = `${trace}.${engine}`;
  const herald: HeraldProcess = await startHerald({ env });
  try {
    const api = await login(herald.url);
    const jwks = await (await fetch(`${herald.url}/.well-known/jwks.json`)).json();
    await fillBacklog(api, sizes.backlog, 'LOW', `isolation-peer: Herald (${engine}) backlog`);
    const critical = await runPaced({
      url: herald.url,
      path: '/notifications',
      headers: api.auth,
      body: JSON.stringify(notification('CRITICAL')),
      everyMs: EVERY_MS,
      forMs: sizes.forMs,
      collect: true,
    });
    if (critical.accepted.length === 0)
      throw new Error(`no CRITICAL accepted: ${critical.failures.join('; ')}`);
    const lowLeft = (await queues(api)).filter((q) => q.priority === 'LOW').reduce((n, q) => n + q.depth, 0);
    const reached = (type: string) => (e: { type: string }) => e.type === type;
    const { views } = await viewsWhen(
      api,
      critical.accepted.map((c) => c.id),
      (view) => view.events.some(reached('SENT')) || view.events.some(reached('DELIVERED')),
      'isolation-peer: CRITICAL sent',
    );
    const provider = views.map((view) => {
      const sent = sinceAcceptance(view, 'SENT');
      return Number.isNaN(sent) ? sinceAcceptance(view, 'DELIVERED') : sent;
    });
    return {
      provider,
      processing: views.map((view) => sinceAcceptance(view, 'PROCESSING')),
      lowLeft,
      auth: { jwks, issuer: ISSUER, audience: AUDIENCE },
      token: api.auth,
    };
  } finally {
    await herald.stop();
  }
}

/**
 * The peer in its strongest mode for this figure (no limiter, 10 jobs in flight, each provider
 * call 5 ms: a CRITICAL waits only for a free slot): the BullMQ peer beside SQLite, the
 * graphile-worker peer beside PostgreSQL, on its own database of the same server.
 */
async function peerBesideDrain(
  engine: Engine,
  auth: PeerAuth,
  token: Api['auth'],
  sizes: { backlog: number; forMs: number },
): Promise<{ latencies: number[]; accepted: number; lowLeft: number; what: string }> {
  const peer =
    engine === 'postgres'
      ? await startPgPeer(auth, await postgresDatabase(), 'latency')
      : await startPeer(auth, 'latency');
  const what =
    engine === 'postgres'
      ? 'graphile-worker 0.17.3 peer'
      : `BullMQ peer (${(peer as { redis?: string }).redis})`;
  try {
    progress(`isolation-peer: queueing ${sizes.backlog.toLocaleString('en-US')} LOW in the ${what}`);
    await peer.preload(sizes.backlog, notification('LOW'));
    const critical = await runPaced({
      url: peer.url,
      path: '/notifications',
      headers: token,
      body: JSON.stringify(notification('CRITICAL')),
      everyMs: EVERY_MS,
      forMs: sizes.forMs,
      collect: true,
    });
    if (critical.accepted.length === 0)
      throw new Error(`the peer accepted no CRITICAL: ${critical.failures.join('; ')}`);
    const lowLeft = await peer.lowWaiting();
    const latencies = await calledLatencies(peer, critical.accepted);
    return { latencies, accepted: critical.accepted.length, lowLeft, what };
  } finally {
    await peer.stop();
  }
}

/**
 * CRITICAL p99 acceptance -> provider beside a LOW drain, Herald against the peer's strongest
 * mode (issue 48), one after the other in one run: 200,000 LOW queued while each drains, then one
 * CRITICAL every 20 ms from a separate process (200 in the full run).
 */
async function besideDrain(engine: Engine, options: BenchOptions): Promise<Row[]> {
  const name = engine === 'postgres' ? 'isolation-peer (postgres)' : 'isolation-peer';
  const sizes = {
    backlog: Math.min(BACKLOG, options.sizes.isolation.backlog),
    forMs: Math.min(FOR_MS, options.sizes.isolation.forMs),
  };
  const herald = await heraldBesideDrain(engine, sizes);
  const peer = await peerBesideDrain(engine, herald.auth, herald.token, sizes);
  const heraldP99 = percentile(herald.provider, 99);
  const peerP99 = percentile(peer.latencies, 99);
  const note =
    `${sizes.backlog.toLocaleString('en-US')} LOW queued while each drains, then one CRITICAL every ${EVERY_MS} ms for ` +
    `${sizes.forMs / 1000} s; Herald (npm start${engine === 'postgres' ? ' with DATABASE_URL' : ''}, to its SENT event) ` +
    `${spread(herald.provider)}, ${herald.lowLeft.toLocaleString('en-US')} LOW left at the end; ` +
    `${peer.what}, no limiter, 10 in flight, 5 ms per provider call (to the call): ${spread(peer.latencies)} ` +
    `(${peer.latencies.length} of ${peer.accepted} reached its provider), ${peer.lowLeft.toLocaleString('en-US')} LOW left`;
  const db = engine === 'postgres' ? 'PostgreSQL' : 'SQLite';
  return [
    measured(name, `CRITICAL p99 acceptance -> provider beside a LOW drain, ${db}: Herald`, heraldP99, 'ms', {
      target: { bound: peerP99, better: 'lower', text: `below the peer's ${peerP99} ms` },
      note,
    }),
    measured(name, `the same: ${peer.what}, no limiter, 10 in flight`, peerP99, 'ms'),
    measured(name, 'Herald CRITICAL p99 acceptance -> PROCESSING', percentile(herald.processing, 99), 'ms'),
  ];
}

export const isolationPeerScenario: Scenario = {
  name: 'isolation-peer',
  title: "CRITICAL beside a LOW drain: Herald vs the peer's strongest mode (SQLite vs BullMQ)",
  run: (options) => besideDrain('sqlite', options),
};

/** `--postgres`: the same on PostgreSQL against the graphile-worker peer. */
export const isolationPeerPostgresScenario: Scenario = {
  name: 'isolation-peer-postgres',
  title: 'CRITICAL beside a LOW drain on PostgreSQL: Herald vs the graphile-worker peer',
  run: (options) => besideDrain('postgres', options),
};
