// A database that cannot do the work now (store-busy.ts): another connection holds the write
// lock past SQLite's busy_timeout, or PostgreSQL's lock_timeout ends the wait. The request answers
// 503 UNAVAILABLE with Retry-After, stores nothing, and the same request succeeds once the lock
// is gone; never a 500. On SQLite in-process (the API's own connection), on PostgreSQL, and in a
// `herald start` whose writes are the dispatch thread's (the error's code crosses the thread).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { authHeader, authTestApp } from '../helpers/auth.ts';
import { tempDir } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import {
  type HeraldProcess,
  oneProcessEnv,
  passwordLogin,
  startHeraldProcess,
} from '../helpers/herald-process.ts';
import { type PostgresServer, sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';
import { email } from '../notifications/fixtures.ts';

/** What a refused request must answer. */
function assertBusy(status: number, headers: { get(name: string): string | null }, body: string): void {
  assert.equal(status, 503, body);
  assert.equal(JSON.parse(body).code, 'UNAVAILABLE');
  assert.equal(headers.get('retry-after'), '1');
  assert.match(headers.get('content-type') ?? '', /application\/problem\+json/);
  assert.match(JSON.parse(body).detail, /database is busy/);
}

/** A notification without Liquid: no syntax check (a render thread's) stands between it and its commit. */
const plain = () => email({ content: { subject: 'Hello', text: 'Hi Ada' }, variables: {} });

const injected = (response: { statusCode: number; headers: Record<string, unknown>; body: string }) => ({
  status: response.statusCode,
  headers: { get: (name: string) => (response.headers[name] as string | undefined) ?? null },
  body: response.body,
});

describe('a busy database answers 503, not 500', () => {
  let t: Awaited<ReturnType<typeof authTestApp>> | undefined;
  let server: PostgresServer | undefined;
  let proc: HeraldProcess | undefined;
  after(async () => {
    await t?.close();
    await proc?.stop(5000);
    if (server) await stopSharedPostgres();
  });

  it('SQLite: a write lock held past busy_timeout refuses the notification, which is then accepted', async () => {
    t = await authTestApp();
    const { app, deps } = t;
    const sender = await authHeader(deps, { role: 'sender' });
    const locker = new Database(join(deps.config.dataDir, 'herald.db'));
    const count = () => (locker.prepare('SELECT COUNT(*) AS n FROM notifications').get() as { n: number }).n;
    const post = () =>
      app.inject({ method: 'POST', url: '/notifications', headers: sender, payload: plain() });
    try {
      locker.exec('BEGIN IMMEDIATE');
      const refused = injected(await post());
      assertBusy(refused.status, refused.headers, refused.body);
      locker.exec('ROLLBACK');
      assert.equal(count(), 0, 'nothing was stored');
      const accepted = await post();
      assert.equal(accepted.statusCode, 201, accepted.body);
      assert.equal(count(), 1);
    } finally {
      if (locker.inTransaction) locker.exec('ROLLBACK');
      locker.close();
      await t.close();
      t = undefined;
    }
  });

  it("PostgreSQL: a lock_timeout ending the insert's wait refuses the notification, which is then accepted", async () => {
    server = await sharedPostgres();
    const url = await server.createDatabase('herald_busy');
    const sql = postgres(url, { max: 2, onnotice: () => undefined });
    try {
      // An operator's setting for every new session of the database (Herald's pool opens after it).
      await sql.unsafe(`ALTER DATABASE "${new URL(url).pathname.slice(1)}" SET lock_timeout = '300ms'`);
      t = await authTestApp({ DATABASE_URL: url });
      const { app, deps } = t;
      const sender = await authHeader(deps, { role: 'sender' });
      const post = () =>
        app.inject({ method: 'POST', url: '/notifications', headers: sender, payload: plain() });
      let release: () => void = () => undefined;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked: () => void = () => undefined;
      const isLocked = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const holder = sql.begin(async (tx) => {
        await tx`LOCK TABLE notifications IN EXCLUSIVE MODE`;
        locked();
        await released;
      });
      await isLocked;
      const refused = injected(await post());
      release();
      await holder;
      assertBusy(refused.status, refused.headers, refused.body);
      assert.equal((await sql`SELECT COUNT(*)::int AS n FROM notifications`)[0]?.n, 0, 'nothing was stored');
      const accepted = await post();
      assert.equal(accepted.statusCode, 201, accepted.body);
      assert.equal((await sql`SELECT COUNT(*)::int AS n FROM notifications`)[0]?.n, 1);
    } finally {
      await t?.close();
      t = undefined;
      await sql.end();
    }
  });

  it("herald start (SQLite): the dispatch thread's busy commit crosses as 503, and the thread goes on", async () => {
    const admin = { email: 'admin@example.com', password: 'busy-store-test-password-1' };
    const dir = tempDir('herald-busy-');
    proc = await startHeraldProcess('busy', oneProcessEnv(dir, admin));
    const api = proc.apiUrl as string;
    const token = await passwordLogin(api, admin);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const post = () =>
      fetch(`${api}/notifications`, { method: 'POST', headers, body: JSON.stringify(plain()) });
    const locker = new Database(join(dir, 'herald.db'));
    try {
      locker.exec('BEGIN IMMEDIATE');
      const refused = await post();
      assertBusy(refused.status, refused.headers, await refused.text());
      locker.exec('ROLLBACK');
      const accepted = await post();
      assert.equal(accepted.status, 201);
      const { notificationId } = (await accepted.json()) as { notificationId: string };
      await eventually(
        async () => {
          const got = await fetch(`${api}/notifications/${notificationId}`, { headers });
          return ((await got.json()) as { status: string }).status === 'DELIVERED';
        },
        30_000,
        'the accepted notification to be delivered after the lock',
        100,
      );
      const n = (locker.prepare('SELECT COUNT(*) AS n FROM notifications').get() as { n: number }).n;
      assert.equal(n, 1, 'the refused notification was not stored');
    } finally {
      if (locker.inTransaction) locker.exec('ROLLBACK');
      locker.close();
    }
  });
});
