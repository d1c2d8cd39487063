import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '../../src/clock.ts';
import { createScheduler } from '../../src/dispatch/scheduler.ts';
import { createWorker } from '../../src/dispatch/worker.ts';
import { createWakeup } from '../../src/notifications/wakeup.ts';
import { createProviderRegistry } from '../../src/providers/registry.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { createRenderer } from '../../src/templates/render.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { newNotification, read, seedMany } from '../store/queue-fixtures.ts';
import { quiet } from './harness.ts';

/** A worker loop on the real clock, as the worker role runs it. */
function running(pollMs: number) {
  const config = testConfig({ HERALD_SANDBOX_FAILURES: 'true' });
  const store = createSqliteStore(config.dataDir);
  const wakeup = createWakeup();
  const providers = createProviderRegistry(
    { config, clock: systemClock, reports: { report: async () => {} }, log: quiet },
    [],
  );
  const scheduler = createScheduler({
    store,
    providers,
    renderer: createRenderer(store),
    clock: systemClock,
    config: config.dispatch,
    log: quiet,
  });
  const worker = createWorker({ scheduler, wakeup, clock: systemClock, pollMs, log: quiet });
  return { store, wakeup, worker };
}

describe('the wake-up', () => {
  it('ends a wait at once when its signal was aborted before it began (a stop between check and wait)', async () => {
    const waited = createWakeup()
      .wait(60_000, AbortSignal.abort())
      .then(() => 'ended');
    const turn = new Promise((resolve) => setImmediate(() => resolve('still waiting')));
    assert.equal(await Promise.race([waited, turn]), 'ended');
  });
});

describe('worker loop', () => {
  const stores: Array<{ close(): Promise<void> }> = [];
  after(async () => {
    for (const s of stores) await s.close();
  });

  it('claims at once when ingest wakes it, without waiting for the poll interval', async () => {
    const { store, wakeup, worker } = running(60_000);
    stores.push(store);
    worker.start();
    await sleep(50); // idle now, waiting on the wake-up signal or the one-minute poll
    // Well inside the poll: a loaded CI machine may take seconds, and only the wake explains it.
    const [id] = await seedMany(store, [newNotification({ createdAt: Date.now() })]);
    wakeup.notify();
    await eventually(async () => (await read(store, id as string)).record.status === 'DELIVERED', 20_000);
    await worker.stop(100);
  });

  it('steps again at once after a step that only stopped suppressed rows', async () => {
    const { store, wakeup, worker } = running(60_000);
    stores.push(store);
    await store.suppressions.add(
      [{ tenant: 't1', channel: 'email', recipient: 'gone@example.com', reason: 'bounce' }],
      Date.now(),
    );
    // More suppressed rows than one step may claim, then one that can be sent.
    const gone = Array.from({ length: 400 }, () =>
      newNotification({ recipient: { email: 'gone@example.com' }, createdAt: Date.now() }),
    );
    const [last] = (await seedMany(store, [...gone, newNotification({ createdAt: Date.now() })])).slice(-1);
    worker.start();
    wakeup.notify();
    try {
      // Waiting for the one-minute poll between steps would time this out.
      await eventually(async () => (await read(store, last as string)).record.status === 'DELIVERED');
    } finally {
      await worker.stop(100);
    }
  });

  it('on stop, lets quick sends finish and releases slow ones without using their attempt', async () => {
    const { store, wakeup, worker } = running(50);
    stores.push(store);
    const [slow, quick] = await seedMany(store, [
      newNotification({ recipient: { email: 'delay-30000@example.com' }, createdAt: Date.now() }),
      newNotification({ createdAt: Date.now() }),
    ]);
    worker.start();
    wakeup.notify();
    await eventually(async () => (await read(store, quick as string)).record.status === 'DELIVERED');
    await eventually(async () => (await read(store, slow as string)).record.status === 'PROCESSING');
    await worker.stop(100);
    const { record, events } = await read(store, slow as string);
    assert.equal(record.status, 'RETRYING');
    assert.equal(record.attempts, 0);
    assert.equal(events.at(-1)?.type, 'THROTTLED');
    assert.equal(events.at(-1)?.detail, 'released at shutdown');
    assert.equal(worker.scheduler.inFlight(), 0);
  });
});
