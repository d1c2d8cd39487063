import { join } from 'node:path';
import { makeWorkerUtils, type WorkerUtils } from 'graphile-worker';
// @ts-expect-error: the peer's plain JavaScript module has no type declarations
import { jobSpec, makeLogger, PRIORITY, TASK } from '../peer-pg/jobs.mjs';
import { progress } from './log.ts';
import { drainEnv, type PeerAuth, type PeerDrain, readCallLog, teardown } from './peer.ts';
import { baseEnv, spawnNode } from './proc.ts';
import { tempDir } from './tmp.ts';

/**
 * The PostgreSQL peer of issue 48 (bench/peer-pg/, from ../shared/peer-bench/peer-pg): the
 * BullMQ peer's Fastify + jose API with graphile-worker 0.17 as its queue, on its own database
 * of the bench's PostgreSQL server (durable, as Herald's), and a graphile-worker runner draining
 * to a null provider meanwhile (a local queue of concurrency + 1 jobs, completions batched over
 * 250 ms, as graphile-worker's performance guide says for a high-throughput queue).
 */
export interface PgPeer {
  url: string;
  /** Queues `count` jobs of `body` at LOW (addJobs, 1000 a call, 4 at once). */
  preload(count: number, body: Record<string, unknown>): Promise<void>;
  /** LOW jobs not yet done. */
  lowWaiting(): Promise<number>;
  /** For each CRITICAL job the worker called its provider for: acceptance to that call, ms. */
  criticalLatencies(): Map<string, number>;
  stop(): Promise<void>;
}

/** Starts the PostgreSQL peer's worker and API on `databaseUrl` (graphile-worker installs its schema). */
export async function startPgPeer(auth: PeerAuth, databaseUrl: string, drain: PeerDrain): Promise<PgPeer> {
  const callLog = join(tempDir('pgpeer'), 'critical-calls.jsonl');
  const { closers, started, stop } = teardown();
  try {
    const env = { ...baseEnv(), DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', ...drainEnv(drain, callLog) };
    // The API first: its migrate() installs graphile-worker's schema, which the runner needs.
    const api = started(
      spawnNode(
        ['bench/peer-pg/server.mjs'],
        {
          ...env,
          PORT: '0',
          PEER_JWKS: JSON.stringify(auth.jwks),
          PEER_ISSUER: auth.issuer,
          PEER_AUDIENCE: auth.audience,
        },
        'pgpeer api',
      ),
    );
    const match = await api.waitForLine(/^PEER (http:\/\/\S+)/, 60_000);
    const worker = started(spawnNode(['bench/peer-pg/worker.mjs'], env, 'pgpeer worker'));
    await worker.waitForLine(/^PEER WORKER ready/, 60_000);
    const utils: WorkerUtils = await makeWorkerUtils({ connectionString: databaseUrl, logger: makeLogger() });
    closers.push(async () => {
      await utils.release();
    });
    return {
      url: match[1] as string,
      async preload(count, body) {
        const payload = { ...body, tid: 'default' };
        const spec = { identifier: TASK, payload, ...jobSpec(payload) };
        let next = 0;
        let added = 0;
        // Fresh planner statistics once a tenth is in, as autovacuum gives them within its
        // naptime: without them the runner fetches with the plan it made for an empty table and
        // drains at tens of jobs a second (the shared bench's README); this is its steady state.
        let analyzed = false;
        const one = async () => {
          while (next < count) {
            const n = Math.min(1000, count - next);
            next += n;
            await utils.addJobs(Array.from({ length: n }, () => spec));
            added += n;
            if (!analyzed && added >= count / 10) {
              analyzed = true;
              progress('pgpeer: ANALYZE of its jobs table, a tenth of the preload in');
              await utils.withPgClient((c) => c.query('ANALYZE graphile_worker._private_jobs'));
            }
          }
        };
        await Promise.all([one(), one(), one(), one()]);
      },
      lowWaiting: () =>
        utils.withPgClient(async (c) => {
          const { rows } = await c.query(
            'SELECT count(*) AS n FROM graphile_worker.jobs WHERE priority = $1',
            [PRIORITY.LOW],
          );
          return Number(rows[0]?.n ?? 0);
        }),
      criticalLatencies: () => readCallLog(callLog),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
