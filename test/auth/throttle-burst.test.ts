// Throttles that hold under concurrency (API.md §2): an attempt is counted before its check, in
// the transaction that reads the counts, so a parallel burst gets at most the allowance checked.
// On SQLite, and on PostgreSQL with two instances (two pools, two apps) sharing the counts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient } from '../../src/auth/accounts.ts';
import { throttleKey } from '../../src/auth/client-address.ts';
import { authTestApp, createUser } from '../helpers/auth.ts';
import { tempDir } from '../helpers/config.ts';
import { type HeraldProcess, startHeraldProcess } from '../helpers/herald-process.ts';
import { type PostgresServer, sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';

const PASSWORD = 'correct horse battery staple';
const LIMITS = { HERALD_LOGIN_MAX_FAILURES: '3', HERALD_LOGIN_MAX_FAILURES_PER_ADDRESS: '5' };

type TestApp = Awaited<ReturnType<typeof authTestApp>>;

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`throttles under concurrency (${kind})`, () => {
    let server: PostgresServer | undefined;
    const apps: TestApp[] = [];
    /** One instance on SQLite; two sharing one database on PostgreSQL. */
    const instances = async (): Promise<TestApp[]> => {
      if (kind === 'sqlite') return [await authTestApp(LIMITS)];
      server ??= await sharedPostgres();
      const url = await server.createDatabase('herald_throttle');
      const one = await authTestApp({ ...LIMITS, DATABASE_URL: url });
      const two = await authTestApp({ ...LIMITS, DATABASE_URL: url });
      return [one, two];
    };
    let pair: TestApp[];
    before(async () => {
      pair = await instances();
      apps.push(...pair);
    });
    after(async () => {
      for (const app of apps) await app.close();
      if (server) await stopSharedPostgres();
    });
    const on = (i: number) => pair[i % pair.length] as TestApp;

    const login = (i: number, email: string, password: string, from: string) =>
      on(i).app.inject({
        method: 'POST',
        url: '/auth/login',
        payload: { email, password },
        headers: { 'x-forwarded-for': from },
      });

    it('checks at most the allowance of a parallel burst and answers 429 to the rest, the right password too', async () => {
      await createUser(on(0).deps, { email: 'burst@example.com', password: PASSWORD });
      const burst = Array.from({ length: 30 }, (_, i) =>
        login(i, 'burst@example.com', i === 29 ? PASSWORD : 'wrong password', `10.9.0.${i}`),
      );
      const statuses = (await Promise.all(burst)).map((r) => r.statusCode);
      const checked = statuses.filter((s) => s !== 429);
      assert.equal(checked.length, 3, `statuses: ${statuses.join(',')}`);
      assert.ok(checked.every((s) => s === 401 || s === 200));
      // Past the limit, the right password is refused like any other try.
      assert.equal((await login(0, 'burst@example.com', PASSWORD, '10.9.1.1')).statusCode, 429);
    });

    it('throttles /auth/token per client id in the OAuth form, a right secret past the limit too', async () => {
      const made = await createClient(
        on(0).deps.store.auth,
        on(0).deps.clock,
        on(0).deps.auth.clientSecrets,
        {
          name: 'billing',
          scopes: ['notifications:send'],
          tenant: 'acme',
        },
      );
      const token = (i: number, secret: string) =>
        on(i).app.inject({
          method: 'POST',
          url: '/auth/token',
          payload: { grant_type: 'client_credentials', client_id: made.client.id, client_secret: secret },
          headers: { 'x-forwarded-for': `10.8.0.${i}` },
        });
      assert.equal((await token(0, made.secret)).statusCode, 200, 'a success is not counted');
      const statuses = (await Promise.all(Array.from({ length: 10 }, (_, i) => token(i, 'wrong')))).map(
        (r) => r.statusCode,
      );
      assert.deepEqual(
        statuses.filter((s) => s !== 429),
        [401, 401, 401],
      );
      const refused = await token(1, made.secret);
      assert.equal(refused.statusCode, 429);
      assert.deepEqual(Object.keys(refused.json()).sort(), ['error', 'error_description']);
      assert.equal(refused.json().error, 'temporarily_unavailable');
      assert.ok(Number(refused.headers['retry-after']) > 0);
      assert.equal(refused.headers['cache-control'], 'no-store');
    });

    it('counts the addresses of one IPv6 /64 as one address', async () => {
      for (let i = 0; i < 5; i++) {
        const from = `2001:db8:7:7:${i}::${i + 1}`;
        assert.equal((await login(i, `nobody${i}@example.com`, 'wrong', from)).statusCode, 401);
      }
      assert.equal((await login(0, 'another@example.com', 'wrong', '2001:db8:7:7:ffff::9')).statusCode, 429);
      assert.equal((await login(0, 'another@example.com', 'wrong', '2001:db8:7:8::1')).statusCode, 401);
    });
  });
}

describe('throttleKey', () => {
  it('keeps IPv4 addresses and reduces IPv6 ones to their /64', () => {
    assert.equal(throttleKey('10.0.0.1'), '10.0.0.1');
    assert.equal(throttleKey('2001:db8:0:1:2:3:4:5'), '2001:db8:0:1::/64');
    assert.equal(throttleKey('2001:DB8::1'), '2001:db8:0:0::/64');
    assert.equal(throttleKey('::1'), '0:0:0:0::/64');
    assert.equal(throttleKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(throttleKey('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64');
  });
});

describe('throttles shared by two API processes on PostgreSQL', () => {
  let server: PostgresServer;
  const processes: HeraldProcess[] = [];
  after(async () => {
    for (const p of processes) await p.stop();
    await stopSharedPostgres();
  });

  it('lets a burst split across two processes check at most the allowance', async () => {
    server = await sharedPostgres();
    const env = {
      DATABASE_URL: await server.createDatabase('herald_two_processes'),
      HERALD_ROLES: 'auth',
      HERALD_API_PORT: '0',
      HERALD_DATA_DIR: tempDir(),
      HERALD_JWT_ISSUER: 'http://herald-two.test',
      HERALD_ADMIN_EMAIL: 'root@example.com',
      HERALD_ADMIN_PASSWORD: PASSWORD,
      LOG_LEVEL: 'warn',
      ...LIMITS,
    };
    processes.push(await startHeraldProcess('auth-1', env));
    processes.push(await startHeraldProcess('auth-2', env));
    const burst = Array.from({ length: 30 }, (_, i) =>
      fetch(`${processes[i % 2]?.apiUrl}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.5.0.${i}` },
        body: JSON.stringify({ email: 'root@example.com', password: i === 29 ? PASSWORD : 'wrong password' }),
      }).then((r) => r.status),
    );
    const statuses = await Promise.all(burst);
    assert.equal(statuses.filter((s) => s !== 429).length, 3, `statuses: ${statuses.join(',')}`);
  });
});
