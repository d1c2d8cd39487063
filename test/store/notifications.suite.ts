import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { notificationId } from '../../src/notifications/ids.ts';
import type { Status } from '../../src/notifications/model.ts';
import type { Store } from '../../src/store/port/index.ts';
import {
  type EncodedNotification,
  encodeNotification,
  type NewNotification,
} from '../../src/store/port/notifications.ts';
import { LIST_SCAN } from '../../src/store/port/scanned-page.ts';

const T0 = Date.UTC(2026, 0, 1);
const DAY = 24 * 60 * 60 * 1000;

let counter = 0;
/** A new notification row with a unique time-ordered id. */
function item(overrides: Partial<NewNotification> = {}): EncodedNotification {
  counter += 1;
  return encodeNotification({
    id: notificationId(T0 + counter),
    tenant: 't1',
    channel: 'email',
    priority: 'NORMAL',
    recipient: { email: 'ada@example.com' },
    templateKey: null,
    templateVersion: null,
    content: { subject: 's', text: 't' },
    variables: { name: 'Ada' },
    metadata: { order: 42 },
    idempotencyKey: null,
    requestHash: null,
    scheduledAt: null,
    expiresAt: null,
    createdAt: T0,
    ...overrides,
  });
}

/** Moves a row the way the scheduler would (its port is its own): status and queue state. */
async function setState(store: Store, id: string, status: Status, queueState: string | null) {
  if (store.kind === 'sqlite') {
    const { db } = store as unknown as { db: import('better-sqlite3').Database };
    db.prepare('UPDATE notifications SET status = ?, queue_state = ? WHERE id = ?').run(
      status,
      queueState,
      id,
    );
  } else {
    const { sql } = store as unknown as { sql: import('postgres').Sql };
    await sql`UPDATE notifications SET status = ${status}, queue_state = ${queueState} WHERE id = ${id}`;
  }
}

async function queueState(
  store: Store,
  id: string,
): Promise<{ queue_state: string | null; due_at: number | null }> {
  if (store.kind === 'sqlite') {
    const { db } = store as unknown as { db: import('better-sqlite3').Database };
    return db.prepare('SELECT queue_state, due_at FROM notifications WHERE id = ?').get(id) as never;
  }
  const { sql } = store as unknown as { sql: import('postgres').Sql };
  const [row] = await sql`SELECT queue_state, due_at FROM notifications WHERE id = ${id}`;
  return { queue_state: row?.queue_state ?? null, due_at: row?.due_at === null ? null : Number(row?.due_at) };
}

/** Behaviour of `store.notifications` that every adapter must show. */
export function notificationStoreSuite(name: string, open: () => Promise<Store>): void {
  describe(`${name}: notifications store`, () => {
    let store: Store;
    before(async () => {
      store = await open();
    });
    after(() => store.close());

    it('stores a batch and reads each back with its fields', async () => {
      const rows = [
        item(),
        item({ channel: 'sms', recipient: { phone: '+15550101234' }, priority: 'CRITICAL' }),
      ];
      const hits = await store.notifications.insertMany(rows, T0 - DAY);
      assert.deepEqual(hits, [undefined, undefined]);
      const found = await store.notifications.get('t1', rows[1]!.id);
      assert.ok(found);
      assert.equal(found.record.status, 'QUEUED');
      assert.equal(found.record.priority, 'CRITICAL');
      assert.deepEqual(found.record.recipient, { phone: '+15550101234' });
      assert.deepEqual(found.record.metadata, { order: 42 });
      assert.equal(found.record.attempts, 0);
      assert.deepEqual(found.events, []);
      assert.equal((await queueState(store, rows[0]!.id)).queue_state, 'ready');
    });

    it('parks a future scheduledAt as waiting until then', async () => {
      const row = item({ scheduledAt: T0 + 60_000 });
      await store.notifications.insertMany([row], T0 - DAY);
      assert.deepEqual(await queueState(store, row.id), { queue_state: 'waiting', due_at: T0 + 60_000 });
    });

    it('answers null for another tenant', async () => {
      const row = item();
      await store.notifications.insertMany([row], T0 - DAY);
      assert.equal(await store.notifications.get('t2', row.id), null);
    });

    it("tells which ids are the tenant's notifications", async () => {
      const rows = [item(), item(), item({ tenant: 't2' })];
      await store.notifications.insertMany(rows, T0 - DAY);
      const ids = rows.map((r) => r.id);
      assert.deepEqual(
        await store.notifications.existing('t1', [...ids, 'nope', ids[0] as string]),
        new Set(ids.slice(0, 2)),
      );
      assert.deepEqual(await store.notifications.existing('t2', ids), new Set(ids.slice(2)));
      assert.deepEqual(await store.notifications.existing('t3', ids), new Set());
    });

    it('returns the first notification for a live idempotency key, even within one batch', async () => {
      const first = item({ idempotencyKey: 'k-1', requestHash: 'h1' });
      const second = item({ idempotencyKey: 'k-1', requestHash: 'h2' });
      const hits = await store.notifications.insertMany([first, second], T0 - DAY);
      assert.equal(hits[0], undefined);
      assert.equal(hits[1]?.record.id, first.id);
      assert.equal(hits[1]?.requestHash, 'h1');
      assert.equal(await store.notifications.get('t1', second.id), null);
      const found = await store.notifications.findIdempotent('t1', 'k-1', T0 - DAY);
      assert.equal(found?.record.id, first.id);
      assert.equal(await store.notifications.findIdempotent('t2', 'k-1', T0 - DAY), null);
    });

    it('writes a batch without idempotency keys whole or not at all: an id already taken fails it, and none of its rows is stored', async () => {
      const taken = item();
      await store.notifications.insertMany([taken], T0 - DAY);
      const fresh = item();
      await assert.rejects(store.notifications.insertMany([fresh, { ...item(), id: taken.id }], T0 - DAY));
      assert.equal(await store.notifications.get('t1', fresh.id), null);
      assert.deepEqual(await store.notifications.existing('t1', [fresh.id, taken.id]), new Set([taken.id]));
    });

    it('keeps acceptance order in a long batch that mixes rows with and without idempotency keys', async () => {
      const plain = (n: number) => Array.from({ length: n }, () => item({ tenant: 'mixed' }));
      const keyed = item({ tenant: 'mixed', idempotencyKey: 'mix-1', requestHash: 'h' });
      const replay = item({ tenant: 'mixed', idempotencyKey: 'mix-1', requestHash: 'h' });
      const rows = [...plain(37), keyed, ...plain(3), replay, ...plain(20)];
      const hits = await store.notifications.insertMany(rows, T0 - DAY);
      assert.deepEqual(
        hits.map((hit, i) => (hit ? i : -1)).filter((i) => i >= 0),
        [41],
      );
      assert.equal(hits[41]?.record.id, keyed.id);
      const stored = (await store.notifications.list('mixed', {}, 100)).items;
      assert.deepEqual(
        stored.map((n) => n.id).reverse(),
        rows.filter((row) => row !== replay).map((row) => row.id),
      );
    });

    it('releases an idempotency key after its window', async () => {
      const old = item({ idempotencyKey: 'k-old', requestHash: 'h' });
      await store.notifications.insertMany([old], T0 - DAY);
      const fresh = item({ idempotencyKey: 'k-old', requestHash: 'h', createdAt: T0 + DAY + 1 });
      const hits = await store.notifications.insertMany([fresh], T0 + 1);
      assert.deepEqual(hits, [undefined]);
      assert.equal((await store.notifications.findIdempotent('t1', 'k-old', T0 + 1))?.record.id, fresh.id);
    });

    it('lists newest first with filters and a sequence cursor', async () => {
      const rows = [1, 2, 3, 4, 5].map((i) =>
        item({ tenant: 'list', priority: i % 2 ? 'HIGH' : 'LOW', createdAt: T0 + i * 1000 }),
      );
      await store.notifications.insertMany(rows, T0 - DAY);
      const all = (await store.notifications.list('list', {}, 10)).items;
      assert.deepEqual(
        all.map((n) => n.id),
        rows.map((r) => r.id).reverse(),
      );
      const high = (await store.notifications.list('list', { priority: 'HIGH' }, 10)).items;
      assert.equal(high.length, 3);
      const page = (await store.notifications.list('list', { beforeSeq: all[1]!.seq }, 2)).items;
      assert.deepEqual(
        page.map((n) => n.id),
        [rows[2]!.id, rows[1]!.id],
      );
      const window = await store.notifications.list(
        'list',
        { createdAfter: T0 + 1000, createdBefore: T0 + 4000 },
        10,
      );
      assert.equal(window.items.length, 2);
    });

    it("looks at LIST_SCAN of a tenant's notifications at most, and reaches a time range at once", async () => {
      // The oldest five a month old, one of them SMS; then LIST_SCAN + 5 email of today, a second apart.
      const old = [1, 2, 3, 4, 5].map((i) =>
        item({ tenant: 'scan', channel: i === 1 ? 'sms' : 'email', createdAt: T0 - 30 * DAY + i }),
      );
      await store.notifications.insertMany(old, T0 - 31 * DAY);
      const today = Array.from({ length: LIST_SCAN + 5 }, (_, i) =>
        item({ tenant: 'scan', createdAt: T0 + i * 1000 }),
      );
      for (let i = 0; i < today.length; i += 2000)
        await store.notifications.insertMany(today.slice(i, i + 2000), T0 - DAY);
      // A filter that matches none of the newest LIST_SCAN: an empty page that says where it got to.
      const first = await store.notifications.list('scan', { channel: 'sms' }, 10);
      assert.deepEqual(first.items, []);
      const newest = (await store.notifications.list('scan', {}, LIST_SCAN)).items;
      assert.equal(first.scannedTo, newest.at(-1)?.seq);
      const second = await store.notifications.list(
        'scan',
        { channel: 'sms', beforeSeq: first.scannedTo },
        10,
      );
      assert.deepEqual(
        second.items.map((n) => n.id),
        [old[0]?.id],
      );
      assert.equal(second.scannedTo, undefined);
      // A time range behind them, or among them, is found by its times, and read at once.
      const month = await store.notifications.list('scan', { createdBefore: T0 - 29 * DAY }, 10);
      assert.deepEqual(
        month.items.map((n) => n.id),
        old.map((n) => n.id).reverse(),
      );
      assert.equal(month.scannedTo, undefined);
      const latest = await store.notifications.list('scan', { createdAfter: T0 + LIST_SCAN * 1000 }, 10);
      assert.deepEqual(
        latest.items.map((n) => n.id),
        today
          .slice(-4)
          .map((n) => n.id)
          .reverse(),
      );
      assert.equal(latest.scannedTo, undefined);
    });

    it("lists a tenant's notifications by recipient digest, stored as given, with the other filters", async () => {
      // #49.14: the digest is the store's to keep and index, not to make (notifications/recipient-digest.ts).
      const ada = item({ tenant: 'by-recipient', recipientDigest: 'digest-ada', createdAt: T0 + 1 });
      const bob = item({ tenant: 'by-recipient', recipientDigest: 'digest-bob', createdAt: T0 + 2 });
      const adaSms = item({
        tenant: 'by-recipient',
        channel: 'sms',
        recipientDigest: 'digest-ada',
        createdAt: T0 + 3,
      });
      const none = item({ tenant: 'by-recipient', createdAt: T0 + 4 });
      const elsewhere = item({ tenant: 'by-recipient-2', recipientDigest: 'digest-ada', createdAt: T0 + 5 });
      const adaLast = item({ tenant: 'by-recipient', recipientDigest: 'digest-ada', createdAt: T0 + 6 });
      await store.notifications.insertMany([ada, bob, adaSms, none, elsewhere, adaLast], T0 - DAY);
      const ids = async (filter: Parameters<Store['notifications']['list']>[1], limit = 10) =>
        (await store.notifications.list('by-recipient', filter, limit)).items.map((n) => n.id);
      assert.deepEqual(await ids({ recipientDigest: 'digest-ada' }), [adaLast.id, adaSms.id, ada.id]);
      assert.deepEqual(await ids({ recipientDigest: 'digest-ada', channel: 'sms' }), [adaSms.id]);
      assert.deepEqual(await ids({ recipientDigest: 'digest-bob' }), [bob.id]);
      assert.deepEqual(await ids({ recipientDigest: 'digest-nobody' }), []);
      const first = (await store.notifications.list('by-recipient', { recipientDigest: 'digest-ada' }, 2))
        .items;
      assert.deepEqual(await ids({ recipientDigest: 'digest-ada', beforeSeq: first[1]?.seq }), [ada.id]);
      // Kept in its column as given.
      const stored =
        store.kind === 'sqlite'
          ? (store as unknown as { db: import('better-sqlite3').Database }).db
              .prepare('SELECT recipient_digest AS d FROM notifications WHERE id IN (?, ?) ORDER BY seq')
              .all(ada.id, none.id)
          : await (store as unknown as { sql: import('postgres').Sql }).sql`
              SELECT recipient_digest AS d FROM notifications WHERE id IN (${ada.id}, ${none.id}) ORDER BY seq`;
      assert.deepEqual(
        stored.map((row) => (row as { d: string | null }).d),
        ['digest-ada', null],
      );
    });

    it('cancels only what no worker holds, with an event', async () => {
      const ready = item();
      const leased = item();
      await store.notifications.insertMany([ready, leased], T0 - DAY);
      await setState(store, leased.id, 'PROCESSING', 'leased');
      assert.equal(await store.notifications.cancel('t1', ready.id, T0 + 5), 'done');
      assert.equal(await store.notifications.cancel('t1', ready.id, T0 + 6), 'invalid_state');
      assert.equal(await store.notifications.cancel('t1', leased.id, T0 + 5), 'invalid_state');
      assert.equal(await store.notifications.cancel('t2', ready.id, T0 + 5), 'not_found');
      const found = await store.notifications.get('t1', ready.id);
      assert.equal(found?.record.status, 'CANCELLED');
      assert.deepEqual(
        found?.events.map((e) => [e.type, e.at]),
        [['CANCELLED', T0 + 5]],
      );
      assert.equal((await queueState(store, ready.id)).queue_state, null);
    });

    it('redrives only a FAILED notification back to ready', async () => {
      const failed = item();
      const queued = item();
      await store.notifications.insertMany([failed, queued], T0 - DAY);
      await setState(store, failed.id, 'FAILED', null);
      assert.equal(await store.notifications.redrive('t1', queued.id, T0 + 9), 'invalid_state');
      assert.equal(await store.notifications.redrive('t2', failed.id, T0 + 9), 'not_found');
      assert.equal(await store.notifications.redrive('t1', failed.id, T0 + 9), 'done');
      const found = await store.notifications.get('t1', failed.id);
      assert.equal(found?.record.status, 'QUEUED');
      assert.equal(found?.record.attempts, 0);
      assert.deepEqual(
        found?.events.map((e) => [e.type, e.detail]),
        [['QUEUED', 'redrive']],
      );
      assert.equal((await queueState(store, failed.id)).queue_state, 'ready');
    });
  });
}
