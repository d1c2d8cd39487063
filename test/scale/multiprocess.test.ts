// Scale-out on one PostgreSQL (docs/scale-out.md): 1 auth, 2 api, 2 worker and 1 gateway
// processes, each a real `node bin/herald.js start` with its HERALD_ROLES, checked from outside
// over HTTP and through the shared database; last, a tenant quota holds across the two API
// processes (docs/quotas.md, Across processes).
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import type { Sql } from '../../src/store/postgres/connect.ts';
import { connectPostgres } from '../../src/store/postgres/connect.ts';
import { createPostgresStore } from '../../src/store/postgres/index.ts';
import { tempDir } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import {
  type HeraldProcess,
  passwordLogin,
  runHerald,
  startHeraldProcess,
} from '../helpers/herald-process.ts';
import { type CallbackReceiver, startCallbackReceiver } from '../helpers/peers/callback-receiver.ts';
import { type PostgresServer, startPostgres } from '../helpers/postgres.ts';
import { openStream, type StreamClient } from '../streams/sse-client.ts';
import { bodies, CLAIM_CYCLE_MS, priorityInversions } from './multiprocess-fixtures.ts';

const ADMIN = { email: 'admin@example.com', password: 'correct horse battery staple' };
const LEASE_MS = 3000;

describe('scale-out: six processes with separate roles on one PostgreSQL', () => {
  let server: PostgresServer;
  let sql: Sql;
  let common: Record<string, string>;
  let auth: HeraldProcess;
  let apis: HeraldProcess[] = [];
  let workers: HeraldProcess[] = [];
  let gateway: HeraldProcess;
  let receiver: CallbackReceiver;
  const streams: StreamClient[] = [];
  // Every process that started, at once: a failure part-way through `before` must not leak one.
  const started: HeraldProcess[] = [];
  const start = async (name: string, env: Record<string, string>) => {
    const proc = await startHeraldProcess(name, env);
    started.push(proc);
    return proc;
  };
  const all = () => started;
  /** Starts several at once, waiting for all of them even when one fails (so none starts unseen). */
  const startAll = async (names: string[], env: Record<string, string>) => {
    const results = await Promise.allSettled(names.map((name) => start(name, env)));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    return results.map((r) => (r as PromiseFulfilledResult<HeraldProcess>).value);
  };

  const dataDir = tempDir('herald-scale-');
  before(async () => {
    server = await startPostgres();
    receiver = await startCallbackReceiver();
    const url = await server.createDatabase('herald_scale');
    // Migrate once up front; the processes would also do it, one at a time under the advisory lock.
    await (await createPostgresStore(url)).close();
    sql = connectPostgres(url, { max: 2 });
    common = {
      DATABASE_URL: url,
      HERALD_JWT_ISSUER: 'http://herald.test',
      HERALD_HOST: '127.0.0.1',
      HERALD_API_PORT: '0',
      HERALD_GATEWAY_PORT: '0',
      // Unused with DATABASE_URL; a directory of its own in case anything writes there.
      HERALD_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      // Short enough for the test to see a rotation and a dead worker's leases within seconds.
      HERALD_LEASE_MS: String(LEASE_MS),
      HERALD_POLL_MS: '100',
      HERALD_SANDBOX_FAILURES: 'true',
      HERALD_KEY_RELOAD_MS: '1000',
      HERALD_JWKS_COOLDOWN_MS: '1000',
      HERALD_CALLBACK_ALLOWED_HOSTS: receiver.host,
    };
    auth = await start('auth', {
      ...common,
      HERALD_ROLES: 'auth',
      HERALD_ADMIN_EMAIL: ADMIN.email,
      HERALD_ADMIN_PASSWORD: ADMIN.password,
    });
    assert.ok(auth.apiUrl, `the auth process printed no API URL:\n${auth.output()}`);
    const jwks = `${auth.apiUrl}/.well-known/jwks.json`;
    apis = await startAll(['api-1', 'api-2'], { ...common, HERALD_ROLES: 'api', HERALD_JWKS_URL: jwks });
    for (const api of apis) assert.ok(api.apiUrl, `${api.name} printed no API URL:\n${api.output()}`);
    gateway = await start('gateway', {
      ...common,
      HERALD_ROLES: 'gateway',
      HERALD_AUTH_URL: auth.apiUrl as string,
      HERALD_API_URL: apis[0]?.apiUrl as string,
    });
    assert.ok(
      gateway.gatewayUrl,
      `the gateway process printed no UI URL (gateway role missing?):\n${gateway.output()}`,
    );
  });

  after(async () => {
    for (const stream of streams) stream.close();
    await Promise.all(all().map((p) => p.stop()));
    await receiver?.close();
    await sql?.end({ timeout: 1 });
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const login = (base: string, path?: string) => passwordLogin(base, ADMIN, path);
  const get = (url: string, token: string) => fetch(url, { headers: { authorization: `Bearer ${token}` } });

  it('accepts a token from the auth process on both API processes and through the gateway', async () => {
    const token = await login(auth.apiUrl as string);
    for (const api of apis) {
      const response = await get(`${api.apiUrl}/notifications?limit=1`, token);
      assert.equal(response.status, 200, `${api.name}: ${await response.text()}`);
    }
    const viaGateway = await get(`${gateway.gatewayUrl}/api/notifications?limit=1`, token);
    assert.equal(viaGateway.status, 200, await viaGateway.text());
    const gatewayToken = await login(gateway.gatewayUrl as string, '/api/session');
    const me = await get(`${apis[1]?.apiUrl}/notifications?limit=1`, gatewayToken);
    assert.equal(me.status, 200);
    const forged = await get(`${apis[0]?.apiUrl}/notifications?limit=1`, `${token.slice(0, -4)}AAAA`);
    assert.equal(forged.status, 401);
  });

  it('delivers 5,000 notifications of every priority and channel exactly once, in priority order across two workers', async () => {
    const token = await login(auth.apiUrl as string);
    // Their DELIVERED changes go to one callback (sent by both workers) and to live streams on
    // the second API process and through the gateway (to the first): changes made elsewhere.
    const hook = await fetch(`${apis[0]?.apiUrl}/callbacks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${receiver.origin}/scale`, events: ['DELIVERED'] }),
    });
    assert.equal(hook.status, 201, await hook.clone().text());
    const onApi2 = openStream(`${apis[1]?.apiUrl}/notifications/stream`, token);
    const onGateway = openStream(`${gateway.gatewayUrl}/api/notifications/stream`, token);
    streams.push(onApi2, onGateway);
    await Promise.all([onApi2.opened, onGateway.opened]);
    // The backlog is stored before any worker runs, so both start on the same full queue.
    for (let batch = 0; batch < 5; batch++) {
      const api = apis[batch % 2] as HeraldProcess;
      const response = await fetch(`${api.apiUrl}/notifications/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ notifications: bodies(batch * 1000, 1000) }),
      });
      assert.equal(response.status, 207, await response.clone().text());
      const { results } = (await response.json()) as { results: Array<{ notificationId?: string }> };
      assert.equal(results.filter((r) => r.notificationId).length, 1000);
    }
    workers = await startAll(['worker-1', 'worker-2'], { ...common, HERALD_ROLES: 'worker' });
    const owners = new Set<string>();
    const leaseOwners = () =>
      sql<
        { owner: string }[]
      >`SELECT DISTINCT lease_owner AS owner FROM notifications WHERE queue_state = 'leased'`;
    const delivered = () =>
      sql<{ n: number }[]>`SELECT count(*)::int AS n FROM notifications WHERE status = 'DELIVERED'`;
    // Sampled every 20 ms: a sandbox send holds its lease only for a moment, and both workers should show.
    const allDelivered = async () => {
      for (const row of await leaseOwners()) owners.add(row.owner);
      return (await delivered())[0]?.n === 5000;
    };
    await eventually(allDelivered, 120_000, 'all 5,000 delivered', 20);
    const [stored] = await sql<{ n: number; distinct: number }[]>`
      SELECT count(*)::int AS n, count(DISTINCT notification_id)::int AS distinct FROM sandbox_messages`;
    assert.deepEqual({ ...stored }, { n: 5000, distinct: 5000 });
    const [cells] = await sql<
      { n: number }[]
    >`SELECT count(DISTINCT (priority, channel))::int AS n FROM notifications`;
    assert.equal(cells?.n, 12);
    const repeated = await sql`SELECT notification_seq FROM notification_events WHERE type = 'PROCESSING'
      GROUP BY notification_seq HAVING count(*) > 1`;
    assert.equal(repeated.length, 0, 'a notification was claimed twice');
    const pids = new Set([...owners].map((owner) => Number(owner.split(':')[1])));
    for (const worker of workers) assert.ok(pids.has(worker.pid), `${worker.name} claimed nothing`);
    const inversions = await priorityInversions(sql);
    assert.deepEqual(
      [...inversions],
      [],
      `LOW claimed while an older CRITICAL waited > ${CLAIM_CYCLE_MS} ms`,
    );

    // The dashboard's figures: the workers serve no port, yet an API process sums what every
    // process published (GET /metrics/cluster), while its own /metrics saw no delivery.
    const outcomes = async (path: string) => {
      const text = await (await get(`${apis[1]?.apiUrl}${path}`, token)).text();
      return [
        ...text.matchAll(/^herald_delivery_outcomes_total\{[^}]*outcome="(?:sent|delivered)"[^}]*\} (\d+)/gm),
      ]
        .map((m) => Number(m[1]))
        .reduce((a, b) => a + b, 0);
    };
    await eventually(
      async () => (await outcomes('/metrics/cluster')) >= 5000,
      15_000,
      'the cluster metrics to show 5,000 deliveries',
      200,
    );
    assert.equal(await outcomes('/metrics'), 0);

    // Callbacks: each DELIVERED once at the receiver, though two workers send; the streams saw all.
    const deliveredIds = (list: Array<{ change: { status: string; notificationId: string } }>) =>
      new Set(list.filter((r) => r.change.status === 'DELIVERED').map((r) => r.change.notificationId));
    await eventually(async () => receiver.at('/scale').length >= 5000, 60_000, '5,000 callbacks', 100);
    await eventually(
      async () => [onApi2, onGateway].every((s) => deliveredIds(s.received).size === 5000),
      30_000,
      'both streams to show 5,000 deliveries',
      200,
    );
    const webhookIds = receiver.at('/scale').map((r) => r.headers['webhook-id']);
    assert.equal(webhookIds.length, 5000, 'a callback message was sent twice');
    assert.equal(new Set(webhookIds).size, 5000);
    const notified = new Set(receiver.at('/scale').map((r) => JSON.parse(r.body).data.notificationId));
    assert.equal(notified.size, 5000);
    for (const stream of [onApi2, onGateway]) {
      const ids = stream.received.map((r) => r.id);
      assert.equal(new Set(ids).size, ids.length, 'a stream sent a change twice');
    }
  });

  it('lets the surviving worker finish the leases of a worker killed with SIGKILL mid-delivery', async () => {
    const token = await login(auth.apiUrl as string);
    // Each send takes 1.5 s in the sandbox (delay injection), so a kill finds sends in flight.
    const response = await fetch(`${apis[0]?.apiUrl}/notifications/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ notifications: bodies(0, 120, 'delay-1500') }),
    });
    assert.equal(response.status, 207);
    const ids = ((await response.json()) as { results: Array<{ notificationId: string }> }).results.map(
      (r) => r.notificationId,
    );
    // The victim is whichever worker holds sends right now (one may have claimed them all).
    let victim: HeraldProcess | undefined;
    await eventually(
      async () => {
        const rows = await sql<{ owner: string }[]>`SELECT lease_owner AS owner FROM notifications
        WHERE queue_state = 'leased' AND id = ANY(${ids}) LIMIT 1`;
        const pid = Number(rows[0]?.owner.split(':')[1]);
        victim = workers.find((w) => w.pid === pid);
        return victim !== undefined;
      },
      30_000,
      'a worker to hold leases',
      200,
    );
    if (!victim) throw new Error('no worker held a lease');
    const survivor = workers.find((w) => w !== victim) as HeraldProcess;
    victim.child.kill('SIGKILL');
    assert.equal(await victim.exited, 'SIGKILL');
    await eventually(
      async () => {
        const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM notifications
        WHERE id = ANY(${ids}) AND status IN ('DELIVERED', 'FAILED', 'CANCELLED', 'EXPIRED')`;
        return row?.n === ids.length;
      },
      90_000,
      'every notification terminal',
      200,
    );
    const statuses = await sql<{ status: string; n: number }[]>`SELECT status, count(*)::int AS n
      FROM notifications WHERE id = ANY(${ids}) GROUP BY status`;
    assert.deepEqual([...statuses], [{ status: 'DELIVERED', n: ids.length }]);
    const [reaped] = await sql<{ n: number }[]>`SELECT count(DISTINCT e.notification_seq)::int AS n
      FROM notification_events e JOIN notifications n ON n.seq = e.notification_seq
      WHERE n.id = ANY(${ids}) AND e.type = 'ATTEMPT_FAILED' AND e.detail LIKE 'lease expired%'`;
    assert.ok((reaped?.n ?? 0) > 0, 'no lease of the killed worker was taken over');
    assert.equal(survivor.child.exitCode, null, `the survivor died:\n${survivor.output()}`);
  });

  it('holds a queue paused through one API process in every worker, until resumed through another', async () => {
    const token = await login(auth.apiUrl as string);
    const post = (base: string | undefined, path: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const paused = await post(apis[0]?.apiUrl, '/admin/queues/pause', { priority: 'LOW' });
    assert.equal(paused.status, 200, await paused.text());
    const low = bodies(0, 30).filter((b) => (b as { priority: string }).priority === 'LOW');
    const accepted = await post(apis[1]?.apiUrl, '/notifications/batch', { notifications: low });
    const ids = ((await accepted.json()) as { results: Array<{ notificationId: string }> }).results.map(
      (r) => r.notificationId,
    );
    const status = async () =>
      sql<{ status: string }[]>`SELECT DISTINCT status FROM notifications WHERE id = ANY(${ids})`;
    // Ten poll intervals of the workers: long enough for any of them to have claimed.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.deepEqual([...(await status())], [{ status: 'QUEUED' }]);
    const queues = await (await get(`${apis[1]?.apiUrl}/admin/queues`, token)).json();
    const cells = (queues as { queues: Array<{ priority: string; paused: boolean }> }).queues;
    assert.ok(cells.filter((q) => q.priority === 'LOW').every((q) => q.paused));
    const resumed = await post(apis[1]?.apiUrl, '/admin/queues/resume', { priority: 'LOW' });
    assert.equal(resumed.status, 200);
    await eventually(
      async () => {
        const rows = await status();
        return rows.length === 1 && rows[0]?.status === 'DELIVERED';
      },
      30_000,
      'the paused notifications delivered after the resume',
      200,
    );
  });

  it('picks up a key rotation done with `herald keys rotate` on every API process without a restart', async () => {
    const before = await login(auth.apiUrl as string);
    const oldKid = decodeProtectedHeader(before).kid;
    const rotated = await runHerald(['keys', 'rotate'], { ...common, HERALD_ROLES: 'auth' });
    assert.equal(rotated.code, 0, `herald keys rotate failed:\n${rotated.output}`);
    let token = before;
    await eventually(
      async () => {
        token = await login(auth.apiUrl as string);
        return decodeProtectedHeader(token).kid !== oldKid;
      },
      90_000,
      'the auth process to sign with the new key',
      200,
    );
    for (const api of apis) {
      await eventually(
        async () => {
          const response = await get(`${api.apiUrl}/notifications?limit=1`, token);
          return response.status === 200;
        },
        60_000,
        `${api.name} to accept the new key`,
        200,
      );
    }
    // The old key stays published until its last token expires: earlier tokens still work.
    const old = await get(`${apis[1]?.apiUrl}/notifications?limit=1`, before);
    assert.equal(old.status, 200);
    for (const p of all()) {
      if (p.child.signalCode !== 'SIGKILL')
        assert.equal(p.child.exitCode, null, `${p.name} restarted or died`);
    }
  });

  it('holds a tenant quota across the two API processes: together at most the burst plus the refill', async () => {
    const token = await login(auth.apiUrl as string);
    const call = async (api: HeraldProcess | undefined, method: string, path: string, body?: object) => {
      const response = await fetch(`${api?.apiUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      await response.text();
      return response;
    };
    // A slow refill: the seconds a loaded machine takes add little to the bound.
    const RATE = 1;
    const BURST = 40;
    const from = Date.now();
    const set = await call(apis[0], 'PUT', '/admin/tenants/default/quotas', {
      total: { ratePerSecond: RATE, burst: BURST },
    });
    assert.equal(set.status, 200);
    try {
      // A GET applies a changed quota in the process that answers it (else its next sync does).
      assert.equal((await call(apis[1], 'GET', '/admin/tenants/default/quotas')).status, 200);
      const sent = Array.from({ length: 4 * BURST }, (_, i) => i % 2);
      const answers = await Promise.all(
        sent.map((i) =>
          call(apis[i], 'POST', '/notifications', {
            channel: 'email',
            priority: 'CRITICAL',
            recipient: { email: `quota-${i}@example.com` },
            content: { subject: 'Hi', text: 'Hello' },
          }),
        ),
      );
      const seconds = (Date.now() - from) / 1000;
      assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([201, 429]));
      // Accepted by each process (sent[k] names the one request k went to).
      const accepted = [0, 1].map((i) => answers.filter((a, k) => sent[k] === i && a.status === 201).length);
      const total = (accepted[0] ?? 0) + (accepted[1] ?? 0);
      // Every accepted one spent a token leased from the one shared row, created full (the burst)
      // after `from` and refilled at RATE since: no lease slack from a quiet start.
      const bound = BURST + Math.ceil(RATE * seconds);
      assert.ok(total <= bound, `${accepted.join(' + ')} accepted in ${seconds} s, bound ${bound}`);
      assert.ok(total >= BURST / 2, `only ${accepted.join(' + ')} of the burst accepted`);
      const refused = answers.find((a) => a.status === 429);
      assert.equal(refused?.headers.get('ratelimit-policy'), `"total-per-second";q=${RATE};w=1`);
      assert.ok(Number(refused?.headers.get('retry-after')) >= 1);
    } finally {
      assert.equal((await call(apis[0], 'DELETE', '/admin/tenants/default/quotas')).status, 204);
    }
  });
});
