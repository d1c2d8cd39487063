import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NewBroadcast } from '../../src/store/port/broadcasts.ts';
import type { Store } from '../../src/store/port/index.ts';
import { T0 } from './queue-fixtures.ts';
import { freshStores } from './suites.ts';

/** `n` recipients of tenant t1 named u-00000 …, so their ID order is their number order. */
export async function people(store: Store, n: number, prefix = 'u-'): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(5, '0')}`);
  for (let i = 0; i < ids.length; i += 1000) {
    await store.recipients.put(
      't1',
      ids.slice(i, i + 1000).map((id) => ({ id, profile: {} })),
      T0,
    );
  }
  return ids;
}

export async function subscribeAll(store: Store, key: string, ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 1000)
    await store.topics.subscribe('t1', key, ids.slice(i, i + 1000), T0);
}

/** `n` people (`people`) subscribed to t1's topic `news`, which this makes: their IDs. */
export async function newsSubscribers(store: Store, n: number): Promise<string[]> {
  const ids = await people(store, n);
  await store.topics.put('t1', 'news', null, T0);
  await subscribeAll(store, 'news', ids);
  return ids;
}

export const broadcast = (over: Partial<NewBroadcast> = {}): NewBroadcast => ({
  id: `b-${Math.random().toString(16).slice(2)}`,
  tenant: 't1',
  topic: 'news',
  channel: 'email',
  priority: 'LOW',
  templateKey: null,
  templateVersion: null,
  content: JSON.stringify({ subject: 'Hi', text: 'News' }),
  variables: null,
  metadata: JSON.stringify({ campaign: 7 }),
  category: null,
  locale: null,
  scheduledAt: null,
  expiresAt: null,
  createdAt: T0,
  ...over,
});

/** Every notification a broadcast made: its recipient's ID, in ID order. */
export async function madeFor(store: Store, id: string): Promise<string[]> {
  const ids: string[] = [];
  let beforeSeq: number | undefined;
  for (;;) {
    const page = await store.notifications.list('t1', { broadcastId: id, beforeSeq }, 500);
    ids.push(...page.items.map((n) => n.recipient.id as string));
    const last = page.items.at(-1);
    if (page.items.length < 500 || !last) break;
    beforeSeq = last.seq;
  }
  return ids.sort();
}

async function fanOutAll(store: Store, chunk: number): Promise<number> {
  let steps = 0;
  while ((await store.broadcasts.step(T0 + 1000 + steps, chunk)) !== null) steps++;
  return steps;
}

/** Topics, subscribers and broadcasts (docs/topics.md): counts kept, snapshot, exactly one each. */
export function topicsSuite(name: string, open: () => Promise<Store>): void {
  describe(`topics and broadcasts store (${name})`, () => {
    const fresh = freshStores(open);

    it('creates and renames a topic, lists by key and keeps tenants apart', async () => {
      const store = await fresh();
      const made = await store.topics.put('t1', 'news', null, T0);
      assert.equal(made.created, true);
      assert.deepEqual(made.record, {
        tenant: 't1',
        key: 'news',
        name: null,
        subscribers: 0,
        createdAt: T0,
        updatedAt: T0,
      });
      const renamed = await store.topics.put('t1', 'news', 'News', T0 + 1);
      assert.equal(renamed.created, false);
      assert.equal(renamed.record.name, 'News');
      assert.equal(renamed.record.createdAt, T0);
      await store.topics.put('t1', 'Alerts', null, T0);
      await store.topics.put('t2', 'other', null, T0);
      assert.deepEqual(
        (await store.topics.list('t1', { limit: 10 })).map((t) => t.key),
        ['Alerts', 'news'],
      );
      assert.deepEqual(
        (await store.topics.list('t1', { limit: 10, after: 'Alerts' })).map((t) => t.key),
        ['news'],
      );
      assert.equal(await store.topics.get('t2', 'news'), null);
      assert.equal(await store.topics.remove('t2', 'news'), false);
      assert.equal(await store.topics.remove('t1', 'news'), true);
      assert.equal(await store.topics.get('t1', 'news'), null);
    });

    it('subscribes a batch: refuses unknown IDs, counts each new member once', async () => {
      const store = await fresh();
      await people(store, 3);
      await store.recipients.put('t2', [{ id: 'stranger', profile: {} }], T0);
      assert.equal(await store.topics.subscribe('t1', 'news', ['u-00000'], T0), null);
      await store.topics.put('t1', 'news', null, T0);
      const first = await store.topics.subscribe(
        't1',
        'news',
        ['u-00001', 'nobody', 'u-00000', 'u-00001', 'stranger'],
        T0,
      );
      assert.deepEqual(first, { added: 2, unknown: ['nobody', 'stranger'] });
      const again = await store.topics.subscribe('t1', 'news', ['u-00000', 'u-00002'], T0 + 1);
      assert.deepEqual(again, { added: 1, unknown: [] });
      assert.equal((await store.topics.get('t1', 'news'))?.subscribers, 3);
      const page = await store.topics.subscribers('t1', 'news', { limit: 2 });
      assert.deepEqual(page, [
        { recipientId: 'u-00000', subscribedAt: T0 },
        { recipientId: 'u-00001', subscribedAt: T0 },
      ]);
      assert.deepEqual(
        (await store.topics.subscribers('t1', 'news', { limit: 2, after: 'u-00001' }))?.map(
          (s) => s.recipientId,
        ),
        ['u-00002'],
      );
      assert.equal(await store.topics.subscribers('t1', 'nope', { limit: 2 }), null);
      assert.equal(await store.topics.unsubscribe('t1', 'news', 'u-00001'), 'done');
      assert.equal(await store.topics.unsubscribe('t1', 'news', 'u-00001'), 'member');
      assert.equal(await store.topics.unsubscribe('t1', 'nope', 'u-00001'), 'topic');
      assert.equal((await store.topics.get('t1', 'news'))?.subscribers, 2);
    });

    it("erases a recipient's memberships with it, and counts it out of each topic", async () => {
      const store = await fresh();
      await people(store, 2);
      await store.topics.put('t1', 'news', null, T0);
      await store.topics.put('t1', 'alerts', null, T0);
      await store.topics.subscribe('t1', 'news', ['u-00000', 'u-00001'], T0);
      await store.topics.subscribe('t1', 'alerts', ['u-00000'], T0);
      assert.equal(await store.recipients.remove('t1', 'u-00000'), true);
      assert.equal((await store.topics.get('t1', 'news'))?.subscribers, 1);
      assert.equal((await store.topics.get('t1', 'alerts'))?.subscribers, 0);
      assert.deepEqual(
        (await store.topics.subscribers('t1', 'news', { limit: 10 }))?.map((s) => s.recipientId),
        ['u-00001'],
      );
      // Subscribed again after coming back: a new membership.
      await store.recipients.put('t1', [{ id: 'u-00000', profile: {} }], T0);
      assert.deepEqual(await store.topics.subscribe('t1', 'alerts', ['u-00000'], T0), {
        added: 1,
        unknown: [],
      });
    });

    it('keeps the count with the memberships when a recipient is erased while it subscribes', async () => {
      // On PostgreSQL the two run in separate transactions: without a common lock, the erasure
      // could miss the membership when counting it out and still delete it (the count one too high).
      const store = await fresh();
      await store.topics.put('t1', 'race-a', null, T0);
      await store.topics.put('t1', 'race-b', null, T0);
      const memberCount = async (key: string) => {
        let n = 0;
        let after: string | undefined;
        for (;;) {
          const page =
            (await store.topics.subscribers('t1', key, { limit: 500, ...(after ? { after } : {}) })) ?? [];
          n += page.length;
          if (page.length < 500) return n;
          after = page.at(-1)?.recipientId;
        }
      };
      for (let round = 0; round < 15; round++) {
        const ids = await people(store, 8, `race-${round}-`);
        await Promise.all(
          ids.flatMap((id, i) => [
            store.topics.subscribe('t1', i % 2 ? 'race-a' : 'race-b', [id], T0),
            store.recipients.remove('t1', id),
            store.topics.subscribe('t1', i % 2 ? 'race-b' : 'race-a', [id], T0),
          ]),
        );
      }
      // Every recipient was erased: no membership is left, and the counts say so.
      for (const key of ['race-a', 'race-b']) {
        assert.equal((await store.topics.get('t1', key))?.subscribers, await memberCount(key), key);
        assert.equal(await memberCount(key), 0, `${key}: no membership outlives its recipient`);
      }
    });

    it('refuses a broadcast to an unknown or empty topic', async () => {
      const store = await fresh();
      assert.equal(await store.broadcasts.create(broadcast()), 'topic');
      await store.topics.put('t1', 'news', null, T0);
      assert.equal(await store.broadcasts.create(broadcast()), 'empty');
      assert.equal(await store.broadcasts.hasWork(), false);
    });

    it('fans out in chunks: one notification per subscriber of the snapshot, then DONE', async () => {
      const store = await fresh();
      const ids = await people(store, 1203);
      await store.topics.put('t1', 'news', null, T0);
      await subscribeAll(store, 'news', ids.slice(0, 1200));
      const b = broadcast();
      assert.equal(await store.broadcasts.create(b), 'created');
      assert.equal(await store.broadcasts.hasWork(), true);
      assert.deepEqual(
        { ...(await store.broadcasts.get('t1', b.id)), updatedAt: 0 },
        {
          id: b.id,
          tenant: 't1',
          topic: 'news',
          status: 'QUEUED',
          channel: 'email',
          priority: 'LOW',
          recipients: null,
          created: 0,
          createdAt: T0,
          updatedAt: 0,
        },
      );
      const first = await store.broadcasts.step(T0 + 10, 500);
      assert.deepEqual(first, {
        broadcastId: b.id,
        tenant: 't1',
        priority: 'LOW',
        made: 500,
        cancelled: 0,
        finished: false,
      });
      // Subscribed after the fan-out started: not in its snapshot.
      await subscribeAll(store, 'news', ids.slice(1200));
      const during = await store.broadcasts.get('t1', b.id);
      assert.equal(during?.status, 'FANNING_OUT');
      assert.equal(during?.recipients, 1200);
      assert.equal(during?.created, 500);
      assert.equal(await fanOutAll(store, 500), 2);
      const done = await store.broadcasts.get('t1', b.id);
      assert.equal(done?.status, 'DONE');
      assert.equal(done?.created, 1200);
      assert.equal(await store.broadcasts.hasWork(), false);
      assert.deepEqual(await madeFor(store, b.id), ids.slice(0, 1200));
      assert.deepEqual(await store.broadcasts.counts('t1', b.id), { QUEUED: 1200 });
      assert.deepEqual(await store.broadcasts.counts('t2', b.id), {});
      assert.equal(await store.broadcasts.get('t2', b.id), null);
      // Each is a notification of its own, in the queue, with the broadcast's content.
      const [one] = (await store.notifications.list('t1', { broadcastId: b.id }, 1)).items;
      const got = await store.notifications.get('t1', one?.id as string);
      assert.equal(got?.record.broadcastId, b.id);
      assert.equal(got?.record.status, 'QUEUED');
      assert.deepEqual(got?.record.content, { subject: 'Hi', text: 'News' });
      assert.deepEqual(got?.record.metadata, { campaign: 7 });
      assert.match(
        got?.record.id ?? '',
        /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
    });

    it('never makes a chunk twice when steps run at once', async () => {
      const store = await fresh();
      const ids = await newsSubscribers(store, 2000);
      const b = broadcast();
      await store.broadcasts.create(b);
      let made = 0;
      for (let round = 0; round < 20 && (await store.broadcasts.hasWork()); round++) {
        const steps = await Promise.all(
          Array.from({ length: 4 }, (_, i) => store.broadcasts.step(T0 + 10 + round * 4 + i, 150)),
        );
        made += steps.reduce((sum, s) => sum + (s?.made ?? 0), 0);
      }
      assert.equal(made, 2000);
      assert.deepEqual(await madeFor(store, b.id), ids);
    });

    it('counts a broadcast of more than one read, letting other work run between them', async () => {
      const store = await fresh();
      await newsSubscribers(store, 20_500);
      const b = broadcast();
      await store.broadcasts.create(b);
      await store.broadcasts.step(T0 + 10, 20_200);
      await store.broadcasts.cancel('t1', b.id, T0 + 20);
      await fanOutAll(store, 5000);
      // 20,200 made, then cancelled: one count spans SQLite's slices of 20,000.
      let between = false;
      setImmediate(() => {
        between = true;
      });
      assert.deepEqual(await store.broadcasts.counts('t1', b.id), { CANCELLED: 20_200 });
      // On SQLite the counts run on the caller's event loop: they give it back between slices.
      assert.equal(between, true);
    });

    it('erases a topic at once and its memberships in chunks, giving the writer back between them', async () => {
      const store = await fresh();
      const ids = await newsSubscribers(store, 2_500);
      const b = broadcast();
      await store.broadcasts.create(b);
      await store.broadcasts.step(T0 + 10, 500);
      let between = false;
      setImmediate(() => {
        between = true;
      });
      assert.equal(await store.topics.remove('t1', 'news'), true);
      // On SQLite the erasure runs on the caller's event loop: it gives it back between chunks.
      assert.equal(between, true);
      assert.equal(await store.topics.get('t1', 'news'), null);
      assert.equal(await store.topics.subscribers('t1', 'news', { limit: 10 }), null);
      assert.deepEqual(await store.topics.subscribe('t1', 'news', [ids[0] as string], T0), null);
      // The broadcast under way fans out to no one more.
      await fanOutAll(store, 500);
      const after = await store.broadcasts.get('t1', b.id);
      assert.equal(after?.status, 'DONE');
      assert.equal(after?.created, 500);
      // A topic of that key made again starts with no member.
      await store.topics.put('t1', 'news', null, T0 + 20);
      assert.equal((await store.topics.get('t1', 'news'))?.subscribers, 0);
      assert.deepEqual(await store.topics.subscribers('t1', 'news', { limit: 10 }), []);
      assert.equal(await store.topics.remove('t1', 'news'), true);
      assert.equal(await store.topics.remove('t1', 'news'), false);
    });

    it('keeps the members of a topic made again while an erasure of its key still runs', async () => {
      const store = await fresh();
      const ids = await newsSubscribers(store, 5_000);
      const erasing = store.topics.remove('t1', 'news');
      await store.topics.put('t1', 'news', null, T0 + 1);
      assert.deepEqual(await store.topics.subscribe('t1', 'news', [ids[0] as string], T0 + 2), {
        added: 1,
        unknown: [],
      });
      assert.equal(await erasing, true);
      assert.deepEqual(
        (await store.topics.subscribers('t1', 'news', { limit: 10 }))?.map((m) => m.recipientId),
        [ids[0]],
      );
    });

    it('cancels: the fan-out stops and its waiting notifications are cancelled with an event', async () => {
      const store = await fresh();
      await newsSubscribers(store, 30);
      const b = broadcast();
      await store.broadcasts.create(b);
      await store.broadcasts.step(T0 + 10, 20);
      const cancelled = await store.broadcasts.cancel('t1', b.id, T0 + 20);
      assert.equal(cancelled?.status, 'CANCELLED');
      assert.equal(await store.broadcasts.cancel('t2', b.id, T0 + 20), null);
      await fanOutAll(store, 8);
      assert.deepEqual(await store.broadcasts.counts('t1', b.id), { CANCELLED: 20 });
      assert.equal((await store.broadcasts.get('t1', b.id))?.created, 20);
      const [one] = (await store.notifications.list('t1', { broadcastId: b.id }, 1)).items;
      const got = await store.notifications.get('t1', one?.id as string);
      assert.deepEqual(
        got?.events.map((e) => e.type),
        ['CANCELLED'],
      );
      assert.equal(await store.broadcasts.hasWork(), false);
    });
  });
}
