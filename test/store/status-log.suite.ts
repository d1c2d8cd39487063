import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/port/index.ts';
import type { Sql } from '../../src/store/postgres/connect.ts';
import { cycle, newNotification, seedMany, T0 } from './queue-fixtures.ts';
import { freshStores } from './suites.ts';

/** The status log (API.md §10): commit order, previous status, bounds, and no gap on PostgreSQL. */
export function statusLogSuite(name: string, open: () => Promise<Store>): void {
  describe(`status log (${name})`, () => {
    const fresh = freshStores(open);

    /** Claims everything ready, then completes each claimed one as sent and delivered. */
    async function deliverAll(store: Store, now = T0 + 1000) {
      const claimed = (await cycle(store, { now, leaseUntil: now + 30_000 })).claimed;
      await store.queue.cycle({
        owner: 'w1',
        now: now + 10,
        leaseUntil: now + 30_000,
        maxAttempts: 3,
        completions: claimed.map((n) => ({
          seq: n.seq,
          attempt: n.attempts,
          kind: 'delivered' as const,
          provider: 'sandbox',
        })),
      });
      return claimed;
    }

    it('reads status events after a cursor, in commit order, with the status before each', async () => {
      const store = await fresh();
      const start = await store.statusLog.head();
      const [a, b] = await seedMany(store, [
        newNotification({ tenant: 'acme', metadata: { ref: 'A' } }),
        newNotification({ tenant: 'other' }),
      ]);
      await deliverAll(store);
      const rows = (await store.statusLog.read(start, { limit: 100 })).rows;
      const ofA = rows.filter((r) => r.notificationId === a);
      assert.deepEqual(
        ofA.map((r) => `${r.previous}>${r.type}`),
        ['null>PROCESSING', 'PROCESSING>SENT', 'SENT>DELIVERED'],
      );
      assert.ok(ofA.every((r) => r.tenant === 'acme'));
      assert.deepEqual(ofA[0]?.metadata, { ref: 'A' });
      assert.equal(ofA[1]?.provider, 'sandbox');
      assert.equal(rows.filter((r) => r.notificationId === b).length, 3);
      // Cursors are strictly increasing, and valid ones are recognised.
      for (let i = 1; i < rows.length; i++) {
        assert.ok(
          store.statusLog.compare(
            (rows[i - 1] as { cursor: string }).cursor,
            (rows[i] as { cursor: string }).cursor,
          ) < 0,
        );
      }
      assert.ok(rows.every((r) => store.statusLog.isCursor(r.cursor)));
      assert.equal(store.statusLog.isCursor('x1'), false);
      // Paging: after the third row, until the fifth.
      const page = (
        await store.statusLog.read((rows[2] as { cursor: string }).cursor, {
          until: (rows[4] as { cursor: string }).cursor,
          limit: 100,
        })
      ).rows;
      assert.deepEqual(
        page.map((r) => r.cursor),
        rows.slice(3, 5).map((r) => r.cursor),
      );
      // `since` leaves out older events; the head is the last one.
      assert.equal((await store.statusLog.read(start, { since: T0 + 5000, limit: 100 })).rows.length, 0);
      assert.equal(await store.statusLog.head(), rows.at(-1)?.cursor);
      assert.equal((await store.statusLog.read(await store.statusLog.head(), { limit: 10 })).rows.length, 0);
      // `types` and `tenants` leave out the others' events, in the database.
      const delivered = (await store.statusLog.read(start, { limit: 100, types: ['DELIVERED'] })).rows;
      assert.deepEqual(
        delivered.map((r) => [r.cursor, r.type, r.previous]),
        rows.filter((r) => r.type === 'DELIVERED').map((r) => [r.cursor, 'DELIVERED', 'SENT']),
      );
      assert.equal(delivered.length, 2);
      const acme = (
        await store.statusLog.read(start, {
          limit: 100,
          tenants: ['acme'],
          types: ['SENT', 'DELIVERED'],
        })
      ).rows;
      assert.deepEqual(
        acme.map((r) => [r.notificationId, r.type]),
        [
          [a, 'SENT'],
          [a, 'DELIVERED'],
        ],
      );
      assert.equal((await store.statusLog.read(start, { limit: 100, tenants: ['nobody'] })).rows.length, 0);
    });

    /** Appends `count` status events of one notification, each committed on its own. */
    async function appendEvents(store: Store, id: string, count: number, at: number) {
      if (name === 'postgres') {
        const sql = (store as Store & { sql: Sql }).sql;
        for (let i = 0; i < count; i++)
          await sql`INSERT INTO notification_events (notification_seq, type, at)
            SELECT seq, 'PROCESSING', ${at} FROM notifications WHERE id = ${id}`;
      } else {
        const db = (store as Store & { db: import('better-sqlite3').Database }).db;
        const insert = db.prepare(`INSERT INTO notification_events (notification_seq, type, at)
          SELECT seq, 'PROCESSING', ? FROM notifications WHERE id = ?`);
        for (let i = 0; i < count; i++) insert.run(at, id);
      }
    }

    /** A fresh store with a notification of tenant `big` and one of `small`, and the log's head then. */
    async function bigAndSmall() {
      const store = await fresh();
      const [big, small] = (await seedMany(store, [
        newNotification({ tenant: 'big' }),
        newNotification({ tenant: 'small' }),
      ])) as [string, string];
      return { store, big, small, start: await store.statusLog.head() };
    }

    it('looks at a bounded part of the log per read, however few events match', async () => {
      const { store, big, small, start } = await bigAndSmall();
      await appendEvents(store, big, 100, T0);
      await appendEvents(store, small, 1, T0);
      // A limit of 10 looks at 80 events (LOG_SCAN_PAGES): none of them the small tenant's.
      const first = await store.statusLog.read(start, { limit: 10, tenants: ['small'] });
      assert.deepEqual(first.rows, []);
      assert.equal(first.more, true);
      const everything = (await store.statusLog.read(start, { limit: 200 })).rows;
      assert.equal(first.readTo, everything[79]?.cursor);
      const second = await store.statusLog.read(first.readTo, { limit: 10, tenants: ['small'] });
      assert.deepEqual(
        second.rows.map((r) => r.notificationId),
        [small],
      );
      assert.equal(second.more, false);
      // A full page ends at its last event.
      const page = await store.statusLog.read(start, { limit: 10 });
      assert.equal(page.rows.length, 10);
      assert.equal(page.readTo, page.rows.at(-1)?.cursor);
      assert.equal(page.more, true);
    });

    it("moves a cursor older than `since` ahead to the log's events of that time", async () => {
      const { store, big, small, start } = await bigAndSmall();
      const since = T0 - 24 * 3600_000;
      // A month-old backlog, far more than one read looks at, then the window's events.
      await appendEvents(store, big, 300, T0 - 30 * 24 * 3600_000);
      await appendEvents(store, small, 1, since - 60_000);
      await appendEvents(store, small, 2, since);
      await appendEvents(store, big, 1, T0);
      const page = await store.statusLog.read(start, { since, limit: 10, tenants: ['small'] });
      // In one read, and nothing of the window is left out.
      assert.deepEqual(
        page.rows.map((r) => r.at),
        [since, since],
      );
      assert.equal(page.more, false);
      const all = (await store.statusLog.read(start, { limit: 1000 })).rows;
      assert.equal(page.readTo, all.at(-1)?.cursor);
      // Without `since`, the log is read from the cursor.
      const unbounded = await store.statusLog.read(start, { limit: 10, tenants: ['small'] });
      assert.deepEqual(unbounded.rows, []);
      assert.equal(unbounded.more, true);
    });

    if (name === 'postgres') {
      it('does not read past a transaction still open, so a late commit leaves no gap', async () => {
        const store = await fresh();
        const sql = (store as Store & { sql: Sql }).sql;
        const start = await store.statusLog.head();
        const [early, later] = await seedMany(store, [newNotification(), newNotification()]);
        const seqOf = async (id: string) =>
          ((await sql`SELECT seq FROM notifications WHERE id = ${id as string}`)[0] as { seq: number }).seq;
        // A transaction takes an event id first and commits last.
        const reserved = await sql.reserve();
        await reserved`BEGIN`;
        await reserved`INSERT INTO notification_events (notification_seq, type, at) VALUES (${await seqOf(early as string)}, 'CANCELLED', ${T0})`;
        await sql`INSERT INTO notification_events (notification_seq, type, at) VALUES (${await seqOf(later as string)}, 'CANCELLED', ${T0})`;
        const whileOpen = (await store.statusLog.read(start, { limit: 100 })).rows;
        assert.deepEqual(whileOpen, [], 'nothing after the open transaction is read yet');
        await reserved`COMMIT`;
        reserved.release();
        const after = (await store.statusLog.read(start, { limit: 100 })).rows;
        assert.deepEqual(
          after.map((r) => r.notificationId),
          [early, later],
        );
      });

      it('finds the head by transaction number, not by its digits (999 before 1000)', async () => {
        const store = await fresh();
        const sql = (store as Store & { sql: Sql }).sql;
        const [id] = await seedMany(store, [newNotification()]);
        const [{ seq }] = (await sql`SELECT seq FROM notifications WHERE id = ${id as string}`) as [
          { seq: number },
        ];
        // Two committed events of old transactions, the later one with one more digit.
        await sql`DELETE FROM notification_events`;
        const [, { id: last }] = (await sql`INSERT INTO notification_events (notification_seq, type, at, tx)
          VALUES (${seq}, 'QUEUED', ${T0}, '999'::xid8), (${seq}, 'CANCELLED', ${T0}, '1000'::xid8)
          RETURNING id::int AS id`) as [{ id: number }, { id: number }];
        assert.equal(await store.statusLog.head(), `1000:${last}`);
      });
    }
  });
}
