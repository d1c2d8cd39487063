// What only shows with several processes on one PostgreSQL: concurrent migrations, concurrent
// claims, and wake-ups that cross connections. Separate pools stand for separate processes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PRIORITIES } from '../../src/notifications/model.ts';
import type { Store } from '../../src/store/port/index.ts';
import { everyPriority } from '../../src/store/port/queue.ts';
import { createPostgresStore } from '../../src/store/postgres/index.ts';
import { type PostgresServer, sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';
import { newNotification, seedMany, T0 } from '../store/queue-fixtures.ts';

const BUDGET = {
  perPriority: [16, 16, 16, 16],
  sharedLimit: 16,
  perChannel: everyPriority({ email: 16, sms: 16, push: 16 }),
};

describe('several processes on one PostgreSQL', () => {
  let server: PostgresServer;
  const stores: Store[] = [];
  before(async () => {
    server = await sharedPostgres();
  });
  after(async () => {
    for (const store of stores) await store.close();
    await stopSharedPostgres();
  });
  const open = async (url: string) => {
    const store = await createPostgresStore(url, { max: 3 });
    stores.push(store);
    return store;
  };

  it('migrates an empty database once when four processes start at the same moment', async () => {
    const url = await server.createDatabase('herald_migrate');
    const opened = await Promise.all([1, 2, 3, 4].map(() => open(url)));
    const { sql } = opened[0] as Store & { sql: import('postgres').Sql };
    const rows = await sql<{ name: string; n: number }[]>`SELECT name, count(*)::int AS n
      FROM schema_migrations GROUP BY name ORDER BY name`;
    assert.ok(rows.length >= 5);
    assert.ok(rows.every((row) => row.n === 1));
  });

  it('never gives one notification to two workers claiming at the same time', async () => {
    const url = await server.createDatabase('herald_claims');
    const workers = await Promise.all([1, 2, 3].map(() => open(url)));
    const first = workers[0] as Store;
    const channels = ['email', 'sms', 'push'] as const;
    await seedMany(
      first,
      Array.from({ length: 300 }, (_, i) =>
        newNotification({ channel: channels[i % 3], priority: PRIORITIES[i % 4], createdAt: T0 + i }),
      ),
    );
    const claimedBy = new Map<number, number>();
    let rounds = 0;
    while (claimedBy.size < 300 && rounds++ < 50) {
      const results = await Promise.all(
        workers.map((store, w) =>
          store.queue.cycle({
            owner: `w${w}`,
            now: T0 + 1000,
            leaseUntil: T0 + 60_000,
            completions: [],
            claim: BUDGET,
            maxAttempts: 3,
          }),
        ),
      );
      results.forEach((result, w) => {
        for (const n of result.claimed) {
          assert.equal(claimedBy.get(n.seq), undefined, `seq ${n.seq} claimed twice`);
          claimedBy.set(n.seq, w);
        }
      });
    }
    assert.equal(claimedBy.size, 300);
    assert.equal(new Set(claimedBy.values()).size, 3, 'every worker claimed some');
  });

  it('wakes a listener in another process on each ingest commit', async () => {
    const url = await server.createDatabase('herald_wakeup');
    const [api, worker] = await Promise.all([open(url), open(url)]);
    let woken = 0;
    let wake: () => void = () => undefined;
    const stop = await (worker as Store).wakeups.subscribe(() => {
      woken++;
      wake();
    });
    const next = () => new Promise<void>((resolve) => (wake = resolve));
    let arrived = next();
    await (api as Store).notifications.insertMany([newNotification(), newNotification()], 0);
    await arrived;
    assert.equal(woken, 1, 'one hint per batch, not one per row');
    arrived = next();
    await (api as Store).notifications.insertMany([newNotification()], 0);
    await arrived;
    assert.equal(woken, 2);
    await stop();
  });
});
