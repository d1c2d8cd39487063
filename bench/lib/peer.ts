import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { freePort } from '../../test/helpers/ports.ts';
// @ts-expect-error: the peer's plain JavaScript module has no type declarations
import { JOB_OPTIONS, PRIORITY, QUEUE } from '../peer/queue.mjs';
import { Unavailable } from './api.ts';
import { baseEnv, type Child, spawnNode, spawnProgram } from './proc.ts';
import { tempDir } from './tmp.ts';

/**
 * The peer of issue 13 (bench/peer/, from ../shared/peer-bench): what a user would build instead
 * of Herald. A Fastify 5 API checking the body with a JSON schema and the ES256 token with jose
 * on every request, one BullMQ queue on a redis-server with `appendfsync always` (so its 201
 * means stored, as Herald's does), and a BullMQ worker draining to a null provider meanwhile.
 */
export interface Peer {
  url: string;
  /** redis-server's version and its appendfsync setting, for the note. */
  redis: string;
  /** Queues `count` jobs of `body` at LOW straight into Redis (BullMQ addBulk, 1000 a call, 4 at once). */
  preload(count: number, body: Record<string, unknown>): Promise<void>;
  /** LOW jobs still waiting. */
  lowWaiting(): Promise<number>;
  /** For each CRITICAL job the worker called its provider for: acceptance to that call, ms. */
  criticalLatencies(): Map<string, number>;
  stop(): Promise<void>;
}

/**
 * How the peer's worker drains: as fast as it can (`none`, 50 in flight), through a rate limiter
 * at 2,000 jobs/s in 100 ms windows (`limiter`: the usual way to respect a provider's rate), or
 * with no limiter and 10 in flight, each provider call taking 5 ms (`latency`: the peer's
 * strongest mode for a CRITICAL beside a drain, issue 48: it waits only for a free slot).
 */
export type PeerDrain = 'none' | 'limiter' | 'latency';

/** The variables both peers' workers read their drain from, and the file they log CRITICAL calls to. */
export function drainEnv(drain: PeerDrain, callLog: string): NodeJS.ProcessEnv {
  return {
    PEER_DRAIN_MODE: drain,
    PEER_DRAIN_RATE: '2000',
    PEER_DRAIN_WINDOW_MS: '100',
    PEER_CALL_LOG: callLog,
  };
}

/** What a peer started, stopped in reverse order by `stop`; `started` adds a child process. */
export function teardown() {
  const closers: Array<() => Promise<void>> = [];
  const started = (child: Child) => {
    closers.push(() => child.stop(5000));
    return child;
  };
  const stop = async () => {
    for (const close of closers.reverse()) await close();
  };
  return { closers, started, stop };
}

/**
 * Acceptance to the provider call of each accepted CRITICAL, as the peer's worker logged it,
 * once every one is in the log (or after a minute: those missing are left out).
 */
export async function calledLatencies(
  peer: { criticalLatencies(): Map<string, number> },
  accepted: ReadonlyArray<{ id: string }>,
): Promise<number[]> {
  const deadline = Date.now() + 60_000;
  let calls = peer.criticalLatencies();
  while (accepted.some((c) => !calls.has(c.id)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    calls = peer.criticalLatencies();
  }
  return accepted.flatMap((c) => calls.get(c.id) ?? []);
}

/** For each CRITICAL job a peer's worker called its provider for: acceptance to that call, ms. */
export function readCallLog(callLog: string): Map<string, number> {
  const latencies = new Map<string, number>();
  if (!existsSync(callLog)) return latencies;
  for (const line of readFileSync(callLog, 'utf8').split('\n')) {
    if (!line) continue;
    const call = JSON.parse(line) as { id: string; calledAt: number; acceptedAt: number };
    if (!latencies.has(call.id)) latencies.set(call.id, call.calledAt - call.acceptedAt);
  }
  return latencies;
}

/** What the peer's API verifies tokens with: Herald's own key set and claims, so one token serves both. */
export interface PeerAuth {
  jwks: unknown;
  issuer: string;
  audience: string;
}

/** redis-server's version, or Unavailable saying how to get it (`.ci/run` does not install it). */
function redisVersion(): string {
  try {
    return /v=(\S+)/.exec(execFileSync('redis-server', ['--version']).toString())?.[1] ?? 'unknown';
  } catch {
    throw new Unavailable(
      'redis-server is not on the PATH, so the BullMQ peer cannot run (apt-get install -y redis-server)',
    );
  }
}

/** Starts a private redis-server (AOF, fsync on every write, no snapshots), the peer's API and its worker. */
export async function startPeer(auth: PeerAuth, drain: PeerDrain = 'none'): Promise<Peer> {
  const version = redisVersion();
  const port = await freePort();
  const dir = tempDir('redis');
  const callLog = join(dir, 'critical-calls.jsonl');
  // Stopped in reverse: the queue client, the API, the worker, then redis-server.
  const { closers, started, stop } = teardown();
  try {
    started(
      spawnProgram(
        'redis-server',
        [
          ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
          ...['--appendonly', 'yes', '--appendfsync', 'always', '--save', ''],
          ...['--maxmemory-policy', 'noeviction', '--daemonize', 'no', '--logfile', join(dir, 'redis.log')],
        ],
        baseEnv(),
        'redis-server',
      ),
    );
    // With --logfile the server prints nothing; wait until its port answers.
    await waitForPort(port, 10_000);
    const env = {
      ...baseEnv(),
      REDIS_HOST: '127.0.0.1',
      REDIS_PORT: String(port),
      LOG_LEVEL: 'warn',
      ...drainEnv(drain, callLog),
    };
    const worker = started(spawnNode(['bench/peer/worker.mjs'], env, 'peer worker'));
    await worker.waitForLine(/^PEER WORKER ready/, 30_000);
    const api = started(
      spawnNode(
        ['bench/peer/server.mjs'],
        {
          ...env,
          PORT: '0',
          PEER_JWKS: JSON.stringify(auth.jwks),
          PEER_ISSUER: auth.issuer,
          PEER_AUDIENCE: auth.audience,
        },
        'peer api',
      ),
    );
    const match = await api.waitForLine(/^PEER (http:\/\/\S+)/, 30_000);
    const queue = new Queue(QUEUE, {
      connection: { host: '127.0.0.1', port, maxRetriesPerRequest: null },
      defaultJobOptions: JOB_OPTIONS,
    });
    closers.push(() => queue.close());
    return {
      url: match[1] as string,
      redis: `redis ${version}, appendfsync always`,
      async preload(count, body) {
        const data = { ...body, tid: 'default' };
        let next = 0;
        const one = async () => {
          while (next < count) {
            const n = Math.min(1000, count - next);
            next += n;
            await queue.addBulk(
              Array.from({ length: n }, () => ({
                name: String(body.channel),
                data,
                opts: { priority: PRIORITY.LOW },
              })),
            );
          }
        };
        await Promise.all([one(), one(), one(), one()]);
      },
      async lowWaiting() {
        return queue.getPrioritizedCount();
      },
      criticalLatencies: () => readCallLog(callLog),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

export async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline)
      throw new Error(`redis-server did not listen on ${port} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
