// Provider limits shared by worker processes through PostgreSQL: two schedulers on two
// connection pools of one database stand for two worker processes; a manual clock makes the
// rate arithmetic exact.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { manualClock } from '../../src/clock.ts';
import type { Store } from '../../src/store/port/index.ts';
import { createPostgresStore } from '../../src/store/postgres/index.ts';
import { schedulerFor, scriptedProvider, tick } from '../dispatch/harness.ts';
import { testConfig } from '../helpers/config.ts';
import { type PostgresServer, sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';
import { newNotification, seedMany, T0 } from '../store/queue-fixtures.ts';

describe('provider limits shared across workers on PostgreSQL', () => {
  let server: PostgresServer;
  const stores: Store[] = [];
  before(async () => {
    server = await sharedPostgres();
  });
  after(async () => {
    for (const store of stores) await store.close();
    await stopSharedPostgres();
  });

  /** Two "worker processes": each its own pool on one fresh database, one clock. */
  async function twoWorkers(env: Record<string, string> = {}) {
    const url = await server.createDatabase('herald_limits');
    const a = await createPostgresStore(url, { max: 2 });
    const b = await createPostgresStore(url, { max: 2 });
    stores.push(a, b);
    return { a, b, config: testConfig(env), clock: manualClock(T0 + 1000) };
  }

  it('keeps two workers together to one rate limit instead of twice it', async () => {
    const { a, b, config, clock } = await twoWorkers();
    const limits = { concurrency: 1000, ratePerSecond: 10, burst: 10 };
    const providers = [1, 2].map(() => ({ ...scriptedProvider('email', () => ({ ok: true })), limits }));
    const [pa, pb] = providers as [(typeof providers)[0], (typeof providers)[0]];
    await seedMany(
      a,
      Array.from({ length: 40 }, () => newNotification({ priority: 'HIGH' })),
    );
    const workerA = schedulerFor({ config, store: a, clock }, { owner: 'a', factories: [() => pa] });
    const workerB = schedulerFor({ config, store: b, clock }, { owner: 'b', factories: [() => pb] });
    const sent = () => pa.calls.length + pb.calls.length;
    for (let i = 0; i < 3; i++) {
      await tick(workerA);
      await tick(workerB);
    }
    assert.equal(sent(), 10, 'the burst is shared, not per worker');
    clock.advance(1000);
    for (let i = 0; i < 3; i++) {
      await tick(workerB);
      await tick(workerA);
    }
    assert.equal(sent(), 20, 'one second refills ten tokens for both workers together');
  });

  it('holds a provider back in every worker once one worker opens its circuit', async () => {
    const { a, b, config, clock } = await twoWorkers({ HERALD_CLAIM_BATCH: '1' });
    const circuit = { failureThreshold: 2, openMs: 10_000, maxOpenMs: 60_000, configPauseMs: 30_000 };
    // A dead provider in A and a healthy one in B: the same provider (email:scripted) as each sees it.
    const failing = scriptedProvider('email', () => ({ ok: false, kind: 'transient', detail: '503' }));
    const healthy = scriptedProvider('email', () => ({ ok: true }));
    await seedMany(
      a,
      Array.from({ length: 6 }, () => newNotification()),
    );
    const workerA = schedulerFor(
      { config, store: a, clock },
      { owner: 'a', factories: [() => failing], circuit },
    );
    const workerB = schedulerFor(
      { config, store: b, clock },
      { owner: 'b', factories: [() => healthy], circuit },
    );
    await tick(workerA);
    await tick(workerA); // the second consecutive failure opens A's circuit
    await tick(workerA); // ... which A publishes with its next step
    assert.equal(failing.calls.length, 2);
    for (let i = 0; i < 3; i++) assert.equal((await tick(workerB)).claimed.length, 0);
    assert.equal(healthy.calls.length, 0, 'B sent nothing while the circuit A opened was open');
    clock.advance(10_001);
    await tick(workerB);
    assert.ok(healthy.calls.length > 0, 'B sends again once the published opening has passed');
  });
});
