// HERALD_CALLBACK_TENANT_RATE: one tenant's callbacks together get at most that many requests a
// second from the sender, however many callbacks it registered, so a tenant with many callbacks
// in a burst cannot take the sender from another tenant's one. With the clock held still, the
// window never moves: tenant acme's three callbacks get 6 requests in all, tenant beta's one gets
// all of its own meanwhile, and acme gets 6 more once the clock moves a second.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { startCallbackSender } from '../../src/callbacks/sender.ts';
import { manualClock } from '../../src/clock.ts';
import { registerCallback, senderPeers } from '../helpers/callback-sender.ts';
import { eventually } from '../helpers/eventually.ts';
import { logChange } from '../helpers/status-log.ts';

describe("a tenant's callbacks share one rate", () => {
  const peers = senderPeers();

  it("holds the tenant's callbacks together to its rate, and not another tenant's", async () => {
    const { store, receiver } = peers;
    for (const id of ['cb_a1', 'cb_a2', 'cb_a3']) await registerCallback(peers, id, 'acme');
    await registerCallback(peers, 'cb_b1', 'beta');
    // Ten changes for each of acme's three callbacks (30 requests), three for beta's one.
    for (let seq = 1; seq <= 10; seq++)
      logChange(store, { seq, id: `a${seq}`, tenant: 'acme', status: 'DELIVERED' });
    for (let seq = 11; seq <= 13; seq++)
      logChange(store, { seq, id: `b${seq}`, tenant: 'beta', status: 'DELIVERED' });
    const clock = manualClock(Date.now());
    const sender = startCallbackSender({
      callbacks: store.callbacks,
      statusLog: store.statusLog,
      clock,
      log: pino({ level: 'silent' }),
      allowedHosts: [receiver.host],
      concurrency: 4,
      ratePerSecond: 100,
      tenantRatePerSecond: 6,
      pollMs: 50,
    });
    const acme = () => ['cb_a1', 'cb_a2', 'cb_a3'].reduce((n, id) => n + receiver.at(`/${id}`).length, 0);
    try {
      await eventually(() => receiver.at('/cb_b1').length === 3, 10_000, "beta's three callbacks");
      await eventually(() => acme() === 6, 10_000, "acme's first six");
      // Ten more passes of the sender with the clock still: acme's window stays full.
      await sleep(500);
      assert.equal(acme(), 6, "acme's three callbacks together within its 6 a second");
      clock.advance(1000);
      sender.changed();
      await eventually(() => acme() === 12, 10_000, "acme's next six, a second later");
      await sleep(300);
      assert.equal(acme(), 12);
    } finally {
      await sender.close();
    }
  });
});
