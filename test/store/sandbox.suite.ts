import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/port/index.ts';
import { everyPriority } from '../../src/store/port/queue.ts';
import { cycle, newNotification, read, seedMany, T0 } from './queue-fixtures.ts';
import { freshStores } from './suites.ts';

/** The sandbox's stored messages: written with their DELIVERED completion, listed newest first. */
export function sandboxSuite(name: string, open: () => Promise<Store>): void {
  describe(`sandbox store (${name})`, () => {
    const fresh = freshStores(open);
    const claimAll = async (store: Store) =>
      (
        await cycle(store, {
          claim: {
            perPriority: [9, 9, 9, 9],
            sharedLimit: 9,
            perChannel: everyPriority({ email: 9, sms: 9, push: 9 }),
          },
        })
      ).claimed;

    it('stores the sandbox message with a delivered completion and lists it newest first', async () => {
      const store = await fresh();
      const ids = await seedMany(store, [
        newNotification(),
        newNotification({ tenant: 't2' }),
        newNotification(),
      ]);
      const claimed = await claimAll(store);
      await store.queue.cycle({
        owner: 'w1',
        now: T0 + 2000,
        leaseUntil: 0,
        maxAttempts: 3,
        completions: claimed.map((n) => ({
          seq: n.seq,
          attempt: 1,
          kind: 'delivered' as const,
          provider: 'sandbox',
          copy: { channel: n.channel, recipient: n.recipient, content: { subject: `s${n.id}` } },
        })),
      });
      const { record, events } = await read(store, ids[0] as string);
      assert.equal(record.status, 'DELIVERED');
      assert.deepEqual(
        events.map((e) => e.type).filter((t) => t !== 'QUEUED'),
        ['PROCESSING', 'SENT', 'DELIVERED'],
      );
      const t1 = await store.sandbox.list({ tenant: 't1', limit: 1 });
      assert.equal(t1[0]?.notificationId, ids[2]);
      assert.deepEqual(t1[0]?.content, { subject: `s${ids[2]}` });
      const next = await store.sandbox.list({ tenant: 't1', limit: 5, before: t1[0]?.id });
      assert.deepEqual(
        next.map((m) => m.notificationId),
        [ids[0]],
      );
      assert.equal((await store.sandbox.list({ limit: 10 })).length, 3);
      assert.equal((await store.sandbox.list({ limit: 10, notificationId: ids[1] }))[0]?.tenant, 't2');
    });
  });
}
