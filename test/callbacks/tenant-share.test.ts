// HERALD_CALLBACK_TENANT_CONCURRENCY: one tenant's callbacks together have at most that many
// requests in flight from the sender, however many callbacks it registered, and take its slots in
// turn; so a tenant with many callbacks in a burst cannot take the sender, which every tenant
// shares, from another tenant's one. Tenant acme's three callbacks answer after 3 s: 6 of their
// requests are in flight at once (2 each), not 3 × 4; tenant beta's one gets all of its own.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { registerCallback, senderPeers, startSender } from '../helpers/callback-sender.ts';
import { eventually } from '../helpers/eventually.ts';
import { logChange } from '../helpers/status-log.ts';

describe("a tenant's callbacks share its slots", () => {
  const peers = senderPeers();

  it("holds the tenant's callbacks together to its share, in turn, and not another tenant's", async () => {
    const { store, receiver } = peers;
    const acme = ['cb_a1', 'cb_a2', 'cb_a3'];
    for (const id of acme) {
      await registerCallback(peers, id, 'acme');
      receiver.hold(`/${id}`, 3000);
    }
    await registerCallback(peers, 'cb_b1', 'beta');
    // Ten changes for each of acme's three callbacks (30 requests), three for beta's one.
    for (let seq = 1; seq <= 10; seq++)
      logChange(store, { seq, id: `a${seq}`, tenant: 'acme', status: 'DELIVERED' });
    for (let seq = 11; seq <= 13; seq++)
      logChange(store, { seq, id: `b${seq}`, tenant: 'beta', status: 'DELIVERED' });
    const sender = startSender(peers, { ratePerSecond: 1000, tenantConcurrency: 6, pollMs: 50 });
    const inFlight = () => acme.map((id) => receiver.at(`/${id}`).length);
    const total = () => inFlight().reduce((a, b) => a + b, 0);
    try {
      await eventually(() => receiver.at('/cb_b1').length === 3, 10_000, "beta's three callbacks");
      await eventually(() => total() === 6, 10_000, "acme's first six");
      // Ten more passes of the sender while acme's six are held: its share stays full.
      await sleep(500);
      assert.equal(total(), 6, "acme's three callbacks together within its 6 in flight");
      assert.deepEqual(inFlight(), [2, 2, 2], 'in turn: two each');
    } finally {
      await sender.close();
    }
  });
});
