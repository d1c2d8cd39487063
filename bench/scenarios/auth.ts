import { createAuthService } from '../../src/auth/service.ts';
import { createLocalVerifier } from '../../src/auth/verifier.ts';
import { systemClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { Unavailable } from '../lib/api.ts';
import { deploy } from '../lib/deploy.ts';
import { ADMIN } from '../lib/herald.ts';
import { assertStatus, runLoad } from '../lib/load.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { measured, type Row } from '../lib/report.ts';
import { median } from '../lib/stats.ts';
import { tempDir } from '../lib/tmp.ts';
import type { Scenario } from './types.ts';

/** Verifications of one token per second, over `seconds`, one at a time (as one request does). */
async function rate(verify: () => Promise<unknown>, seconds: number): Promise<number> {
  const started = performance.now();
  const until = started + seconds * 1000;
  let count = 0;
  while (performance.now() < until) {
    for (let i = 0; i < 100; i++) await verify();
    count += 100;
  }
  return count / ((performance.now() - started) / 1000);
}

/**
 * In-process: the auth engineer's local verifier with and without the verified-token cache,
 * over real keys in a temporary SQLite store, in alternating rounds.
 */
async function verifications(options: BenchOptions): Promise<Row[]> {
  const config = loadConfig({ HERALD_DATA_DIR: tempDir('auth'), LOG_LEVEL: 'silent' });
  const store = createSqliteStore(config.dataDir);
  try {
    const service = createAuthService(config, store, systemClock);
    await service.keyring.ensureActive();
    const { token } = await service.tokens.issueAccess({
      sub: 'usr_bench',
      tenant: 'default',
      scopes: ['notifications:send'],
      role: 'sender',
    });
    const make = (cacheSize: number) =>
      createLocalVerifier({
        keyring: service.keyring,
        issuer: config.auth.issuer,
        audience: config.auth.audience,
        clock: systemClock,
        maxLifetimeS: config.auth.accessTtl,
        cacheSize,
      });
    const cached = make(config.auth.verifyCacheSize);
    const uncached = make(0);
    const { verifySeconds } = options.sizes.auth;
    await rate(() => uncached.verify(token), verifySeconds / 2);
    await rate(() => cached.verify(token), verifySeconds / 2);
    const without: number[] = [];
    const withCache: number[] = [];
    for (let i = 0; i < options.sizes.rounds; i++) {
      without.push(await rate(() => uncached.verify(token), verifySeconds));
      withCache.push(await rate(() => cached.verify(token), verifySeconds));
      progress(
        `auth round ${i + 1}: ${Math.round(without.at(-1) as number)}/s without cache, ${Math.round(withCache.at(-1) as number)}/s with`,
      );
    }
    const note = `in-process, one token, ${config.auth.alg}; median of ${options.sizes.rounds} alternating rounds`;
    return [
      measured('auth', 'verifications/s without the cache', median(without), '/s', { note }),
      measured('auth', 'verifications/s with the verified-token cache', median(withCache), '/s'),
      measured('auth', 'cache speed-up', median(withCache.map((w, i) => w / (without[i] as number))), 'x'),
    ];
  } finally {
    await store.close();
  }
}

/**
 * Over HTTP: POST /auth/login with the admin's credentials (bounded by argon2id), and
 * POST /auth/token with a service client's credentials (a keyed digest, no argon2), in
 * alternating rounds on one Herald; then logins again while /auth/token is loaded beside them,
 * so what one kind of call costs the other shows.
 */
async function logins(options: BenchOptions): Promise<Row[]> {
  const herald = await deploy('sqlite', { roles: 'auth,api' });
  try {
    const { login, loginConnections, rounds } = { ...options.sizes.auth, rounds: options.sizes.rounds };
    const made = await herald.api.request('POST', '/admin/clients', {
      name: 'bench',
      scopes: ['notifications:send'],
    });
    const client = made.body as { client_id: string; client_secret: string };
    if (made.status !== 201) throw new Error(`client creation failed: ${made.status}`);
    const load = (path: string, body: unknown, connections: number) => ({
      urls: herald.urls,
      method: 'POST' as const,
      path,
      body: JSON.stringify(body),
      connections,
      seconds: login.seconds,
      amount: login.amount,
    });
    // 60 connections calling /auth/token beside the logins (fewer in --quick, whose runs are by count).
    const BESIDE = Math.min(60, login.amount ?? 60);
    const loginSpec = load('/auth/login', ADMIN, loginConnections);
    const tokenSpec = load(
      '/auth/token',
      { grant_type: 'client_credentials', client_id: client.client_id, client_secret: client.client_secret },
      loginConnections,
    );
    const loginRps: number[] = [];
    const loginP99: number[] = [];
    const tokenRps: number[] = [];
    const tokenP99: number[] = [];
    const besideP99: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const logged = await runLoad(loginSpec);
      assertStatus(logged, 200, 'logins');
      loginRps.push(logged.rps);
      loginP99.push(logged.latency.p99);
      const tokens = await runLoad(tokenSpec);
      assertStatus(tokens, 200, '/auth/token');
      tokenRps.push(tokens.rps);
      tokenP99.push(tokens.latency.p99);
      const [beside] = await Promise.all([
        runLoad(loginSpec),
        runLoad(load(tokenSpec.path, JSON.parse(tokenSpec.body), BESIDE)),
      ]);
      assertStatus(beside, 200, 'logins beside /auth/token');
      besideP99.push(beside.latency.p99);
      progress(
        `auth round ${i + 1}: ${Math.round(logged.rps)} logins/s, ${Math.round(tokens.rps)} /auth/token/s, login p99 ${beside.latency.p99} ms beside ${BESIDE} token connections`,
      );
    }
    const note = `${loginConnections} connections, median of ${rounds} rounds`;
    return [
      measured('auth', 'logins/s over HTTP', median(loginRps), '/s', {
        note: `argon2id, ${note}; p99 ${median(loginP99)} ms`,
      }),
      measured('auth', '/auth/token calls/s over HTTP', median(tokenRps), '/s', {
        note: `keyed digest, ${note}; p99 ${median(tokenP99)} ms`,
      }),
      measured('auth', `login p99 while ${BESIDE} connections call /auth/token`, median(besideP99), 'ms', {
        note: `the same login load; alone its p99 is ${median(loginP99)} ms`,
      }),
    ];
  } finally {
    await herald.stop();
  }
}

async function run(options: BenchOptions): Promise<Row[]> {
  const rows = await verifications(options);
  try {
    rows.push(...(await logins(options)));
  } catch (error) {
    if (!(error instanceof Unavailable)) throw error;
    rows.push({
      scenario: 'auth',
      metric: 'logins/s over HTTP',
      value: null,
      unit: '',
      met: null,
      status: 'unavailable',
      note: `not available yet: ${error.message}`,
    });
  }
  return rows;
}

export const authScenario: Scenario = {
  name: 'auth',
  title: '7. Auth: verifications/s with and without the cache, logins/s, /auth/token calls/s',
  run,
};
