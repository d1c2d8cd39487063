import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { systemClock } from '../../../src/clock.ts';
import { createScheduler } from '../../../src/dispatch/scheduler.ts';
import type { App } from '../../../src/http/types.ts';
import { createReportService } from '../../../src/notifications/reports.ts';
import { createProviderRegistry } from '../../../src/providers/registry.ts';
import { smsProviderFactories } from '../../../src/providers/sms/index.ts';
import { createSqliteStore } from '../../../src/store/sqlite/index.ts';
import { createRenderer } from '../../../src/templates/render.ts';
import { testConfig } from '../../helpers/config.ts';
import { startTwilioPeer, type TwilioPeer } from '../../helpers/peers/twilio.ts';
import { newNotification, read, seedMany } from '../../store/queue-fixtures.ts';
import { PUBLIC_URL, TWILIO_TOKEN, webhookApp } from '../../webhooks/harness.ts';

const SID = 'AC0123456789abcdef0123456789abcdef';
const quiet = { info() {}, warn() {}, error() {} };

describe('Twilio behind the scheduler, with its status callbacks', () => {
  const closers: Array<() => Promise<unknown>> = [];
  after(async () => {
    for (const close of closers.reverse()) await close();
  });

  it('applies a callback that beat the recorded SID, and later ones, to the notification', async () => {
    const config0 = testConfig();
    const store = createSqliteStore(config0.dataDir);
    closers.push(() => store.close());
    const { app } = await webhookApp(store);
    closers.push(() => app.close());
    const post = (webhooks: App, callback: ReturnType<TwilioPeer['callback']>) =>
      webhooks.inject({
        method: 'POST',
        url: callback.path,
        payload: new URLSearchParams(callback.form).toString(),
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': callback.signature,
        },
      });
    const early: number[] = [];
    // Twilio calls back with "sent" before its API answer reaches the worker.
    const peer: TwilioPeer = await startTwilioPeer(SID, TWILIO_TOKEN, async (sid) => {
      early.push((await post(app, peer.callback(sid, 'sent'))).json().pending);
    });
    closers.push(() => peer.close());
    const config = testConfig({
      HERALD_PUBLIC_URL: PUBLIC_URL,
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
      TWILIO_FROM: '+15550001111',
      TWILIO_API_BASE: peer.apiBase,
    });
    const providers = createProviderRegistry(
      { config, clock: systemClock, reports: createReportService(store, systemClock), log: quiet },
      smsProviderFactories,
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
    const [id] = await seedMany(store, [newNotification({ channel: 'sms', createdAt: systemClock.now() })]);
    for (let i = 0; i < 50 && (await read(store, id!)).record.status !== 'SENT'; i++) {
      await scheduler.step();
      await scheduler.settled(50);
    }
    const sent = await read(store, id!);
    assert.equal(sent.record.status, 'SENT');
    assert.equal(sent.record.providerMessageId, peer.requests[0]?.sid);
    assert.deepEqual(early, [1]);
    // The early "sent" was kept and applied by the worker's completion: a WEBHOOK event.
    assert.deepEqual(
      sent.events.map((e) => e.type),
      ['PROCESSING', 'SENT', 'WEBHOOK'],
    );
    const sid = sent.record.providerMessageId!;
    assert.equal((await post(app, peer.callback(sid, 'delivered'))).statusCode, 200);
    // The "sent" again: the same report as the early one, so no second event.
    assert.equal((await post(app, peer.callback(sid, 'sent'))).json().duplicate, 1);
    const done = await read(store, id!);
    assert.equal(done.record.status, 'DELIVERED');
    assert.deepEqual(
      done.events.map((e) => [e.type, e.source ?? null]),
      [
        ['PROCESSING', null],
        ['SENT', null],
        ['WEBHOOK', 'webhook'],
        ['DELIVERED', 'webhook'],
      ],
    );
  });
});
