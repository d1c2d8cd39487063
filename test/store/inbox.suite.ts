import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { InboxEntry } from '../../src/notifications/status.ts';
import type { Store } from '../../src/store/port/index.ts';
import { cycle, newNotification, read, seedMany, T0 } from './queue-fixtures.ts';
import { freshStores } from './suites.ts';

const entry = (recipientId: string, n: number, over: Partial<InboxEntry> = {}): InboxEntry => ({
  recipientId,
  title: `title ${n}`,
  body: `body ${n}`,
  url: null,
  data: null,
  category: null,
  ...over,
});

/**
 * Delivers one notification per entry into the inbox, each by its own completion at T0 + 2 s + i
 * (so each is newer than the one before); returns their IDs in that order.
 */
async function deliver(store: Store, entries: readonly InboxEntry[], tenant = 't1'): Promise<string[]> {
  const ids = await seedMany(
    store,
    entries.map(() => newNotification({ tenant })),
  );
  const { claimed } = await cycle(store);
  const bySeq = new Map(claimed.map((n) => [n.id, n]));
  for (const [i, id] of ids.entries()) {
    const n = bySeq.get(id);
    if (!n) throw new Error(`${id} was not claimed`);
    await store.queue.cycle({
      owner: 'w1',
      now: T0 + 2000 + i,
      leaseUntil: 0,
      maxAttempts: 3,
      completions: [
        { seq: n.seq, attempt: 1, kind: 'stored', message: entries[i] as InboxEntry, locale: 'fr' },
      ],
    });
  }
  return ids;
}

/** The types of a notification's events after its DELIVERED. */
const reading = async (store: Store, id: string) => {
  const types = (await read(store, id)).events.map((e) => e.type);
  return types.slice(types.indexOf('DELIVERED') + 1);
};

/** Each recipient's inbox (docs/inbox.md): stored with DELIVERED, listed, counted, acted on, erased. */
export function inboxSuite(name: string, open: () => Promise<Store>): void {
  describe(`inbox store (${name})`, () => {
    const fresh = freshStores(open);

    it('stores the message with its DELIVERED completion (source inbox, no provider) and lists it newest first', async () => {
      const store = await fresh();
      const ids = await deliver(store, [
        entry('ada', 1, { url: 'https://example.com/1', data: { k: [1, 'two'] }, category: 'billing' }),
        entry('ada', 2),
        entry('bob', 3),
      ]);
      const { record, events } = await read(store, ids[0] as string);
      assert.equal(record.status, 'DELIVERED');
      assert.equal(record.provider, null);
      assert.deepEqual(
        events.map((e) => [e.type, e.source ?? null, e.locale ?? null]),
        [
          ['PROCESSING', null, null],
          ['DELIVERED', 'inbox', 'fr'],
        ],
      );
      const ada = await store.inbox.list('t1', 'ada', { filter: 'all', limit: 10 });
      assert.deepEqual(
        ada.map((m) => m.id),
        [ids[1], ids[0]],
      );
      assert.deepEqual(ada[1], {
        id: ids[0],
        tenant: 't1',
        recipientId: 'ada',
        title: 'title 1',
        body: 'body 1',
        url: 'https://example.com/1',
        data: { k: [1, 'two'] },
        category: 'billing',
        createdAt: T0 + 2000,
        seenAt: null,
        readAt: null,
        archivedAt: null,
      });
      // Pages: after the first one, the rest; another tenant's recipient of the same ID has none.
      const [first] = await store.inbox.list('t1', 'ada', { filter: 'all', limit: 1 });
      assert.equal(first?.id, ids[1]);
      const rest = await store.inbox.list('t1', 'ada', {
        filter: 'all',
        limit: 10,
        after: { createdAt: first?.createdAt as number, id: first?.id as string },
      });
      assert.deepEqual(
        rest.map((m) => m.id),
        [ids[0]],
      );
      assert.deepEqual(await store.inbox.list('t2', 'ada', { filter: 'all', limit: 10 }), []);
      assert.deepEqual(await store.inbox.counts('t1', 'ada'), { unread: 2, unseen: 2 });
      assert.deepEqual(await store.inbox.counts('t1', 'nobody'), { unread: 0, unseen: 0 });
      assert.equal((await store.inbox.get('t1', 'ada', ids[0] as string))?.title, 'title 1');
      assert.equal(await store.inbox.get('t1', 'bob', ids[0] as string), null, "another recipient's message");
      assert.equal(await store.inbox.get('t2', 'ada', ids[0] as string), null, "another tenant's");
    });

    it('acts once: the change and its event together, nothing when nothing changes', async () => {
      const store = await fresh();
      const [a, b, c] = (await deliver(store, [entry('ada', 1), entry('ada', 2), entry('ada', 3)])) as [
        string,
        string,
        string,
      ];
      const t = T0 + 10_000;
      const seen = await store.inbox.act('t1', 'ada', a, 'seen', t);
      assert.equal(seen?.changed, true);
      assert.equal(seen?.message.seenAt, t);
      assert.equal((await store.inbox.act('t1', 'ada', a, 'seen', t + 1))?.changed, false);
      // Reading a seen message logs READ only; reading an unseen one marks it seen too.
      const readA = await store.inbox.act('t1', 'ada', a, 'read', t + 2);
      assert.deepEqual([readA?.message.seenAt, readA?.message.readAt], [t, t + 2]);
      const readB = await store.inbox.act('t1', 'ada', b, 'read', t + 3);
      assert.deepEqual([readB?.message.seenAt, readB?.message.readAt], [t + 3, t + 3]);
      assert.equal((await store.inbox.act('t1', 'ada', b, 'read', t + 4))?.changed, false, 'a second read');
      assert.deepEqual(await reading(store, a), ['SEEN', 'READ']);
      assert.deepEqual(await reading(store, b), ['SEEN', 'READ']);
      const { events } = await read(store, b);
      assert.deepEqual(events.at(-1), { type: 'READ', at: t + 3 });
      assert.deepEqual(await store.inbox.counts('t1', 'ada'), { unread: 1, unseen: 1 });
      // unread and unarchive clear their mark and log no event of the notification.
      const before = await store.statusLog.head();
      const unread = await store.inbox.act('t1', 'ada', b, 'unread', t + 5);
      assert.deepEqual(
        [unread?.changed, unread?.message.readAt, unread?.message.seenAt],
        [true, null, t + 3],
      );
      assert.equal((await store.inbox.act('t1', 'ada', b, 'unread', t + 5))?.changed, false);
      assert.deepEqual(await reading(store, b), ['SEEN', 'READ']);
      assert.deepEqual(await store.inbox.counts('t1', 'ada'), { unread: 2, unseen: 1 });
      // Archived: counted neither as unread nor unseen, listed only by `archived`.
      assert.equal((await store.inbox.act('t1', 'ada', c, 'archive', t + 6))?.changed, true);
      assert.equal((await store.inbox.act('t1', 'ada', c, 'archive', t + 7))?.changed, false);
      assert.deepEqual(await reading(store, c), ['ARCHIVED']);
      assert.deepEqual(await store.inbox.counts('t1', 'ada'), { unread: 1, unseen: 0 });
      const ids = async (filter: 'all' | 'unread' | 'unseen' | 'archived') =>
        (await store.inbox.list('t1', 'ada', { filter, limit: 10 })).map((m) => m.id);
      assert.deepEqual(await ids('all'), [b, a]);
      assert.deepEqual(await ids('unread'), [b]);
      assert.deepEqual(await ids('unseen'), []);
      assert.deepEqual(await ids('archived'), [c]);
      const back = await store.inbox.act('t1', 'ada', c, 'unarchive', t + 8);
      assert.deepEqual([back?.changed, back?.message.archivedAt], [true, null]);
      assert.deepEqual(await reading(store, c), ['ARCHIVED']);
      // Each of them logs INBOX_COUNTS for the inbox streams of every process, and only that:
      // the log's reads give it, nothing reports it as the notification's event.
      const logged = (await store.statusLog.read(before, { limit: 100 })).rows.filter(
        (row) => row.type === 'INBOX_COUNTS',
      );
      assert.deepEqual(
        logged.map((row) => [row.notificationId, row.at]),
        [
          [b, t + 5],
          [c, t + 8],
        ],
      );
      assert.deepEqual(await ids('unseen'), [c]);
      // Unknown, another recipient's, another tenant's: null, and nothing logged.
      assert.equal(await store.inbox.act('t1', 'bob', c, 'read', t + 9), null);
      assert.equal(await store.inbox.act('t2', 'ada', c, 'read', t + 9), null);
      assert.equal(await store.inbox.act('t1', 'ada', 'nope', 'read', t + 9), null);
      assert.deepEqual(await reading(store, c), ['ARCHIVED']);
      // The status stays DELIVERED whatever the reader does.
      assert.equal((await read(store, c)).record.status, 'DELIVERED');
    });

    it('marks all seen or read: what changes, with its events, archived ones left alone', async () => {
      const store = await fresh();
      const [a, b, c, d] = (await deliver(store, [
        entry('ada', 1),
        entry('ada', 2),
        entry('ada', 3),
        entry('bob', 4),
      ])) as [string, string, string, string];
      const t = T0 + 10_000;
      await store.inbox.act('t1', 'ada', a, 'read', t);
      await store.inbox.act('t1', 'ada', c, 'archive', t);
      assert.equal(await store.inbox.actAll('t1', 'ada', 'seen', t + 1), 1);
      assert.equal(await store.inbox.actAll('t1', 'ada', 'seen', t + 2), 0);
      assert.deepEqual(await reading(store, b), ['SEEN']);
      assert.equal(await store.inbox.actAll('t1', 'ada', 'read', t + 3), 1);
      assert.equal(await store.inbox.actAll('t1', 'ada', 'read', t + 4), 0);
      assert.deepEqual(await reading(store, b), ['SEEN', 'READ']);
      assert.deepEqual(await reading(store, a), ['SEEN', 'READ']);
      assert.deepEqual(await reading(store, c), ['ARCHIVED'], 'archived: not read by read-all');
      assert.deepEqual(await reading(store, d), [], "another recipient's");
      assert.deepEqual(await store.inbox.counts('t1', 'ada'), { unread: 0, unseen: 0 });
      assert.deepEqual(await store.inbox.counts('t1', 'bob'), { unread: 1, unseen: 1 });
      // read-all on unseen messages logs SEEN then READ for each.
      assert.equal(await store.inbox.actAll('t1', 'bob', 'read', t + 5), 1);
      assert.deepEqual(await reading(store, d), ['SEEN', 'READ']);
    });

    it("erases a recipient's messages with the recipient, and no one else's", async () => {
      const store = await fresh();
      await store.recipients.put('t1', [{ id: 'ada', profile: {} }], T0);
      await store.recipients.put('t2', [{ id: 'ada', profile: {} }], T0);
      await deliver(store, [entry('ada', 1), entry('bob', 2)]);
      await deliver(store, [entry('ada', 3)], 't2');
      assert.equal(await store.recipients.remove('t1', 'ada'), true);
      assert.deepEqual(await store.inbox.list('t1', 'ada', { filter: 'all', limit: 10 }), []);
      assert.deepEqual(await store.inbox.counts('t1', 'ada'), { unread: 0, unseen: 0 });
      assert.equal((await store.inbox.list('t1', 'bob', { filter: 'all', limit: 10 })).length, 1);
      assert.equal((await store.inbox.list('t2', 'ada', { filter: 'all', limit: 10 })).length, 1);
    });
  });
}
