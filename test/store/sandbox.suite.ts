import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/port/index.ts';
import { everyPriority } from '../../src/store/port/queue.ts';
import { LIST_SCAN } from '../../src/store/port/scanned-page.ts';
import type { Sql } from '../../src/store/postgres/connect.ts';
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
      const t1 = (await store.sandbox.list({ tenant: 't1', limit: 1 })).items;
      assert.equal(t1[0]?.notificationId, ids[2]);
      assert.deepEqual(t1[0]?.content, { subject: `s${ids[2]}` });
      const next = (await store.sandbox.list({ tenant: 't1', limit: 5, before: t1[0]?.id })).items;
      assert.deepEqual(
        next.map((m) => m.notificationId),
        [ids[0]],
      );
      assert.equal((await store.sandbox.list({ limit: 10 })).items.length, 3);
      assert.equal((await store.sandbox.list({ limit: 10, notificationId: ids[1] })).items[0]?.tenant, 't2');
    });

    it('looks at LIST_SCAN of the messages at most for a channel filter, and says where it got to', async () => {
      const store = await fresh();
      // One SMS, then LIST_SCAN + 1 email, written straight into the table.
      const channels = ['sms', ...Array.from({ length: LIST_SCAN + 1 }, () => 'email')];
      if (name === 'postgres') {
        const sql = (store as Store & { sql: Sql }).sql;
        await sql`INSERT INTO sandbox_messages (notification_seq, notification_id, tenant, channel, recipient, content, attempt, at)
          SELECT i, 'n' || (i - 1), 't1', c, '{}', '{}', 1, ${T0} FROM unnest(${channels}::text[]) WITH ORDINALITY AS x(c, i)`;
      } else {
        const db = (store as Store & { db: import('better-sqlite3').Database }).db;
        const insert =
          db.prepare(`INSERT INTO sandbox_messages (notification_seq, notification_id, tenant, channel, recipient, content, attempt, at)
          VALUES (?, ?, 't1', ?, '{}', '{}', 1, ?)`);
        db.transaction(() => {
          for (const [i, c] of channels.entries()) insert.run(i, `n${i}`, c, T0);
        })();
      }
      const first = await store.sandbox.list({ tenant: 't1', channel: 'sms', limit: 10 });
      assert.deepEqual(first.items, []);
      assert.notEqual(first.scannedTo, undefined);
      const second = await store.sandbox.list({
        tenant: 't1',
        channel: 'sms',
        limit: 10,
        before: first.scannedTo,
      });
      assert.deepEqual(
        second.items.map((m) => m.channel),
        ['sms'],
      );
      assert.equal(second.scannedTo, undefined);
      // By notification, its own index: no bound.
      assert.equal(
        (await store.sandbox.list({ notificationId: 'n0', channel: 'sms', limit: 10 })).items.length,
        1,
      );
    });
  });
}
