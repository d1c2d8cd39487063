// Issue 48: a CRITICAL's completion must not wait for a LOW batch. The step that writes LOW's
// completions is held by a gate (its cycle does not start, so its commit cannot happen) while the
// CRITICAL's send finishes: the CRITICAL must reach SENT meanwhile, written by the scheduler's
// urgent lane. Before the lane, its completion sat in the same buffer as LOW's and waited for the
// held step. Nothing here is timed: the gate holds until the test opens it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/port/index.ts';
import type { CycleInput } from '../../src/store/port/queue.ts';
import { eventually } from '../helpers/eventually.ts';
import { newNotification, read, seedMany, T0 } from '../store/queue-fixtures.ts';
import { type Env, schedulerFor, scriptedProvider, storeKinds, suiteStores } from './harness.ts';

/** A gate the test opens by hand. */
function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/**
 * The store, with every cycle that writes a completion of one of `held` waiting for `lowGate`
 * before it starts: the LOW batch's step, held before its transaction.
 */
function holdingLowSteps(store: Store, held: Set<number>, lowGate: Promise<void>) {
  const cycles: CycleInput[] = [];
  const queue = {
    ...store.queue,
    async cycle(input: CycleInput) {
      cycles.push(input);
      if (input.completions.some((c) => held.has(c.seq))) await lowGate;
      return store.queue.cycle(input);
    },
  };
  return { store: { ...store, queue } as Store, cycles };
}

for (const kind of storeKinds())
  describe(`the urgent lane (${kind})`, () => {
    const fresh = suiteStores(kind);

    it("writes a CRITICAL's completion while the step with LOW's completions is held", async () => {
      const env: Env = await fresh();
      const criticalSend = gate();
      const lowStep = gate();
      const provider = scriptedProvider('email', async (message) => {
        // The CRITICAL's provider call answers only when the LOW step is already held.
        if (message.priority === 'CRITICAL') await criticalSend.opened;
        return { ok: true, providerMessageId: `m-${message.notificationId}` };
      });
      const low = newNotification({ priority: 'LOW', createdAt: T0 });
      const critical = newNotification({ priority: 'CRITICAL', createdAt: T0 + 1 });
      await seedMany(env.store, [low, critical]);
      const lowSeqs = new Set<number>();
      const gated = holdingLowSteps(env.store, lowSeqs, lowStep.opened);
      const scheduler = schedulerFor({ ...env, store: gated.store }, { factories: [() => provider] });

      const first = await scheduler.step();
      assert.deepEqual(
        first.claimed.map((n) => n.id),
        [critical.id, low.id],
      );
      for (const n of first.claimed) if (n.priority === 'LOW') lowSeqs.add(n.seq);
      // LOW's send answers at once; its completion waits for the next step, which the gate holds.
      await eventually(() => scheduler.pendingForStep() === 1, 30_000, "LOW's completion");
      const held = scheduler.step();
      await eventually(
        () => gated.cycles.some((c) => c.completions.some((x) => lowSeqs.has(x.seq))),
        30_000,
        "the LOW batch's step to start",
      );

      criticalSend.open();
      await eventually(
        async () => (await read(env.store, critical.id)).record.status === 'SENT',
        30_000,
        'the CRITICAL to reach SENT while the LOW step is held',
      );
      assert.equal((await read(env.store, low.id)).record.status, 'PROCESSING', 'the LOW step is still held');

      lowStep.open();
      await held;
      assert.equal((await read(env.store, low.id)).record.status, 'SENT');
      const sent = (await read(env.store, critical.id)).events.filter((e) => e.type === 'SENT');
      assert.equal(sent.length, 1, 'the CRITICAL is written once');
      await scheduler.drained();
    });

    it('claims a CRITICAL at once when asked, while the step in progress is held', async () => {
      const env: Env = await fresh();
      const lowStep = gate();
      const sent: string[] = [];
      const provider = scriptedProvider('email', (message) => {
        sent.push(message.notificationId);
        return { ok: true };
      });
      const low = newNotification({ priority: 'LOW', createdAt: T0 });
      await seedMany(env.store, [low]);
      const lowSeqs = new Set<number>();
      const gated = holdingLowSteps(env.store, lowSeqs, lowStep.opened);
      const scheduler = schedulerFor({ ...env, store: gated.store }, { factories: [() => provider] });
      const first = await scheduler.step();
      for (const n of first.claimed) lowSeqs.add(n.seq);
      await eventually(() => scheduler.pendingForStep() === 1, 30_000, "LOW's completion");
      const held = scheduler.step();
      await eventually(() => gated.cycles.length === 2, 30_000, "the LOW batch's step to start");

      // A CRITICAL committed now (ingest's urgent wake-up asks the lane to claim).
      const critical = newNotification({ priority: 'CRITICAL', createdAt: T0 + 1 });
      await seedMany(env.store, [critical]);
      scheduler.claimUrgent();
      await eventually(
        async () => (await read(env.store, critical.id)).record.status === 'SENT',
        30_000,
        'the CRITICAL to be claimed, sent and written while the LOW step is held',
      );
      assert.deepEqual(sent, [low.id, critical.id]);
      assert.equal((await read(env.store, low.id)).record.status, 'PROCESSING', 'the LOW step is still held');
      const lane = gated.cycles.slice(2);
      assert.ok(
        lane.every((c) => c.claim?.perPriority.slice(2).every((n) => n === 0) ?? true),
        'the lane claims CRITICAL and HIGH only',
      );
      lowStep.open();
      await held;
      await scheduler.drained();
    });
  });
