// #50: a broadcast's fan-out is durable and shared. With real `herald start` processes: a
// `kill -9` in the middle of a fan-out on SQLite, then a restart, leaves exactly one notification
// per subscriber; two worker processes on one PostgreSQL fan one broadcast out without a
// duplicate. The notifications are scheduled a day ahead so that the workers only fan out.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { NewBroadcast } from '../../src/store/port/broadcasts.ts';
import type { Store } from '../../src/store/port/index.ts';
import { createPostgresStore } from '../../src/store/postgres/index.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { type HeraldProcess, oneProcessEnv, startHeraldProcess } from '../helpers/herald-process.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';

const ADMIN = { email: 'admin@example.com', password: 'fan-out-test-password-1' };
const DAY = 24 * 60 * 60 * 1000;

/** A topic of `n` subscribers of tenant `default` and a LOW email broadcast to it, due in a day. */
async function seed(store: Store, n: number): Promise<string> {
  await seedTopic(store, n);
  return broadcastTo(store);
}

/** A topic `everyone` of `n` subscribers of tenant `default`. */
async function seedTopic(store: Store, n: number): Promise<void> {
  const now = Date.now();
  const ids = Array.from({ length: n }, (_, i) => `r${String(i).padStart(7, '0')}`);
  await store.topics.put('default', 'everyone', null, now);
  for (let i = 0; i < n; i += 1000) {
    const slice = ids.slice(i, i + 1000);
    await store.recipients.put(
      'default',
      slice.map((id) => ({ id, profile: { email: `${id}@example.com` } })),
      now,
    );
    await store.topics.subscribe('default', 'everyone', slice, now);
  }
}

/** A LOW email broadcast to topic `everyone`, due in a day; its id. */
async function broadcastTo(store: Store): Promise<string> {
  const now = Date.now();
  const broadcast: NewBroadcast = {
    id: `bc-${now}`,
    tenant: 'default',
    topic: 'everyone',
    channel: 'email',
    priority: 'LOW',
    templateKey: null,
    templateVersion: null,
    content: JSON.stringify({ subject: 'News', text: 'Hello' }),
    variables: null,
    metadata: null,
    category: null,
    locale: null,
    scheduledAt: now + DAY,
    expiresAt: null,
    createdAt: now,
  };
  assert.equal(await store.broadcasts.create(broadcast), 'created');
  return broadcast.id;
}

describe('broadcast fan-out across processes', () => {
  const started: HeraldProcess[] = [];
  after(async () => {
    await Promise.all(started.map((p) => p.stop(2000)));
    await stopSharedPostgres();
  });

  it('makes exactly one notification per subscriber through a kill -9 mid fan-out (SQLite)', {
    timeout: 120_000,
  }, async (t) => {
    const N = 60_000;
    const dataDir = tempDir('herald-fan-out-');
    const seeding = createSqliteStore(dataDir);
    await seedTopic(seeding, N);
    await seeding.close();
    const env = oneProcessEnv(dataDir, ADMIN, { HERALD_POLL_MS: '50' });
    const read = <R>(sql: string, ...params: unknown[]): R => {
      const db = new Database(join(dataDir, 'herald.db'), { readonly: true, fileMustExist: true });
      try {
        return db.prepare(sql).get(...params) as R;
      } finally {
        db.close();
      }
    };
    const progress = () =>
      read<{ created: number; status: string }>('SELECT created, status FROM broadcasts WHERE id = ?', id);

    const first = await startHeraldProcess('fan-out-1', env);
    started.push(first);
    // The broadcast is made once Herald runs, so its fan-out cannot end before the watch begins.
    const making = createSqliteStore(dataDir);
    const id = await broadcastTo(making);
    await making.close();
    let atKill = progress();
    while (atKill.created === 0) {
      await new Promise((resolve) => setTimeout(resolve, 2));
      atKill = progress();
    }
    first.child.kill('SIGKILL');
    await first.exited;
    atKill = progress();
    assert.ok(
      atKill.created > 0 && atKill.created < N,
      `killed mid fan-out (${atKill.created} of ${N} made)`,
    );
    const made = read<{ n: number }>('SELECT count(*) AS n FROM notifications WHERE broadcast_id = ?', id);
    assert.equal(made.n, atKill.created, 'the cursor moved with the committed chunks and no further');

    const second = await startHeraldProcess('fan-out-2', env);
    started.push(second);
    await eventually(() => progress().status === 'DONE', 60_000, 'the fan-out to finish after the restart');
    const rows = read<{ n: number; people: number }>(
      'SELECT count(*) AS n, count(DISTINCT recipient) AS people FROM notifications WHERE broadcast_id = ?',
      id,
    );
    assert.deepEqual(rows, { n: N, people: N });
    assert.equal(progress().created, N);
    t.diagnostic(`killed with ${atKill.created} of ${N} made; ${rows.n} after the restart`);
  });

  it('shares one broadcast between two PostgreSQL worker processes without a duplicate', {
    timeout: 120_000,
  }, async () => {
    const N = 40_000;
    const url = await (await sharedPostgres()).createDatabase('herald_fan_out');
    const store = await createPostgresStore(url, { max: 2 });
    try {
      const id = await seed(store, N);
      const env = {
        DATABASE_URL: url,
        HERALD_ROLES: 'worker',
        HERALD_DATA_DIR: tempDir('herald-fan-out-pg-'),
        HERALD_POLL_MS: '20',
        LOG_LEVEL: 'warn',
      };
      const workers = await Promise.all([
        startHeraldProcess('fan-out-w1', env),
        startHeraldProcess('fan-out-w2', env),
      ]);
      started.push(...workers);
      await eventually(
        async () => (await store.broadcasts.get('default', id))?.status === 'DONE',
        60_000,
        'the two workers to finish the fan-out',
      );
      const sql = (store as unknown as { sql: import('../../src/store/postgres/connect.ts').Sql }).sql;
      const [rows] = await sql<{ n: number; people: number }[]>`
        SELECT count(*)::int AS n, count(DISTINCT recipient)::int AS people FROM notifications
        WHERE broadcast_id = ${id}`;
      assert.deepEqual({ n: rows?.n, people: rows?.people }, { n: N, people: N });
      assert.equal((await store.broadcasts.get('default', id))?.created, N);
    } finally {
      await store.close();
    }
  });
});
