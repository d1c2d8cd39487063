import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { systemClock } from '../../../src/clock.ts';
import { createScheduler } from '../../../src/dispatch/scheduler.ts';
import { emailProviderFactories } from '../../../src/providers/email/index.ts';
import { createProviderRegistry } from '../../../src/providers/registry.ts';
import { createSqliteStore } from '../../../src/store/sqlite/index.ts';
import { createRenderer } from '../../../src/templates/render.ts';
import { testConfig } from '../../helpers/config.ts';
import { eventually } from '../../helpers/eventually.ts';
import { startSmtpPeer } from '../../helpers/peers/smtp.ts';
import { newNotification, read, seedMany } from '../../store/queue-fixtures.ts';

const quiet = { info() {}, warn() {}, error() {} };

describe('SMTP provider behind the scheduler', () => {
  const closers: Array<() => Promise<void>> = [];
  after(async () => {
    for (const close of closers.reverse()) await close();
  });

  it('holds the pool and rate limits under a burst, and records each Message-ID', async () => {
    const peer = await startSmtpPeer();
    closers.push(() => peer.close());
    const config = testConfig({
      SMTP_URL: peer.url(undefined, undefined, 'maxConnections=2&rateLimit=5'),
      EMAIL_FROM: 'Herald <noreply@mail.example.com>',
    });
    const store = createSqliteStore(config.dataDir);
    closers.push(() => store.close());
    const providers = createProviderRegistry(
      { config, clock: systemClock, reports: { report: async () => {} }, log: quiet },
      emailProviderFactories,
    );
    closers.push(() => providers.close());
    const scheduler = createScheduler({
      store,
      providers,
      renderer: createRenderer(store),
      clock: systemClock,
      config: config.dispatch,
      log: quiet,
    });
    const ids = await seedMany(
      store,
      Array.from({ length: 12 }, (_, i) =>
        newNotification({ recipient: { email: `burst${i}@example.com` }, createdAt: systemClock.now() }),
      ),
    );
    let running = true;
    const loop = (async () => {
      while (running) {
        await scheduler.step();
        await scheduler.settled(50);
      }
    })();
    try {
      await eventually(() => peer.received.length === 12, 30_000, 'all 12 messages at the peer');
      await eventually(() => scheduler.inFlight() === 0 && scheduler.pending() === 0, 10_000, 'completions');
      await scheduler.step();
    } finally {
      running = false;
      await loop;
    }
    for (const id of ids) {
      const { record } = await read(store, id);
      assert.equal(record.status, 'SENT');
      assert.equal(record.provider, 'smtp');
      assert.equal(record.providerMessageId, `${id}@mail.example.com`);
    }
    assert.ok(peer.maxConcurrentConnections <= 2, `saw ${peer.maxConcurrentConnections} connections`);
    // An upper bound only: at most 5 transactions start in any second.
    const starts = peer.received.map((m) => m.at).sort((a, b) => a - b);
    for (let i = 0; i + 5 < starts.length; i++) assert.ok(starts[i + 5]! - starts[i]! >= 800);
  });

  it('holds notifications without using their attempts when SMTP authentication fails', async () => {
    const peer = await startSmtpPeer({ users: { herald: 'right' } });
    closers.push(() => peer.close());
    const config = testConfig({
      SMTP_URL: peer.url('herald', 'wrong'),
      EMAIL_FROM: 'Herald <noreply@mail.example.com>',
    });
    const store = createSqliteStore(config.dataDir);
    closers.push(() => store.close());
    const providers = createProviderRegistry(
      { config, clock: systemClock, reports: { report: async () => {} }, log: quiet },
      emailProviderFactories,
    );
    closers.push(() => providers.close());
    const scheduler = createScheduler({
      store,
      providers,
      renderer: createRenderer(store),
      clock: systemClock,
      config: config.dispatch,
      log: quiet,
    });
    const [id] = await seedMany(store, [newNotification({ createdAt: systemClock.now() })]);
    for (let i = 0; i < 50; i++) {
      await scheduler.step();
      await scheduler.settled(50);
      if ((await read(store, id!)).events.some((e) => e.type === 'THROTTLED')) break;
    }
    const { record, events } = await read(store, id!);
    assert.notEqual(record.status, 'FAILED');
    assert.equal(record.attempts, 0);
    const held = events.find((e) => e.type === 'THROTTLED');
    assert.match(held?.detail ?? '', /paused \(configuration\): SMTP authentication failed/);
    assert.doesNotMatch(JSON.stringify(events), /wrong/);
    assert.equal(peer.received.length, 0);
  });
});
