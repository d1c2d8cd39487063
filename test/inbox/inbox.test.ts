// The inbox endpoints and the inbox stream (docs/inbox-api.md) against a real Herald (API and
// worker in one process) delivering `inapp` messages, on SQLite and PostgreSQL: the list, its
// filters and cursors, the counts, every action and bulk form, another recipient's message 404,
// bad queries 400; the stream (read with @herald/client's helper): live messages and counts,
// counts after read and unread, and a replay with Last-Event-ID without gap or duplicate.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createHeraldClient, type InboxEvent } from '../../clients/typescript/src/index.ts';
import { STREAMS_PER_RECIPIENT } from '../../src/inbox/stream-route.ts';
import { type Herald, startHerald } from '../../src/main.ts';
import { apiCall } from '../helpers/api-call.ts';
import { tokenFor } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';

/** A stream read by the client's helper into `events`, until `close`. */
interface Reader {
  events: InboxEvent[];
  close(): void;
}

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`inbox API and stream (${kind})`, () => {
    let herald: Herald;
    let admin: string;
    const tokens: Record<string, string> = {};
    const readers: Reader[] = [];
    before(async () => {
      const env: Record<string, string> =
        kind === 'postgres'
          ? { DATABASE_URL: await (await sharedPostgres()).createDatabase('herald_inbox_api') }
          : {};
      herald = await startHerald(testConfig({ ...env, HERALD_ROLES: 'auth,api,worker' }));
      admin = await tokenFor(herald.deps, { role: 'admin' });
      for (const id of ['ada', 'bob']) {
        assert.equal(
          (await call(admin, 'PUT', `/recipients/${id}`, { email: `${id}@example.com` })).status,
          201,
        );
        const minted = await call(admin, 'POST', `/recipients/${id}/token`);
        assert.equal(minted.status, 200);
        tokens[id] = minted.json.access_token;
      }
    });
    after(async () => {
      for (const reader of readers) reader.close();
      await herald.close();
      if (kind === 'postgres') await stopSharedPostgres();
    });

    const call = (token: string, method: string, path: string, body?: object) =>
      apiCall(herald.apiUrl as string, token, method, path, body);
    const as = (who: string) => (method: string, path: string) => call(tokens[who] as string, method, path);
    const ada = as('ada');

    function read(who: string, lastEventId?: string): Reader {
      const client = createHeraldClient({
        baseUrl: herald.apiUrl as string,
        credentials: { accessToken: tokens[who] as string },
      });
      const events: InboxEvent[] = [];
      const abort = new AbortController();
      void (async () => {
        for await (const event of client.inbox.stream({ lastEventId, signal: abort.signal }))
          events.push(event);
      })().catch(() => undefined);
      const reader = { events, close: () => abort.abort() };
      readers.push(reader);
      return reader;
    }
    const messages = (r: Reader) => r.events.flatMap((e) => (e.type === 'message' ? [e] : []));
    const lastCounts = (r: Reader) => r.events.findLast((e) => e.type === 'counts');

    async function send(recipient: string, title: string, category?: string): Promise<string> {
      const accepted = await call(admin, 'POST', '/notifications', {
        channel: 'inapp',
        recipient: { id: recipient },
        content: { title, body: `${title}, in full`, url: 'https://app.example.com/x', data: { n: 1 } },
        ...(category && { category }),
      });
      assert.equal(accepted.status, 201, JSON.stringify(accepted.json));
      return accepted.json.notificationId;
    }
    const delivered = (id: string) =>
      eventually(
        async () => (await call(admin, 'GET', `/notifications/${id}`)).json.status === 'DELIVERED',
        15_000,
        `${id} DELIVERED`,
      );

    const ids: string[] = [];
    let live: Reader;

    it('streams each new message live to its recipient only, with the counts after it', async () => {
      live = read('ada');
      const bobs = read('bob');
      await eventually(
        () => lastCounts(live) !== undefined && lastCounts(bobs) !== undefined,
        10_000,
        'first counts',
      );
      assert.deepEqual(lastCounts(live), {
        type: 'counts',
        id: lastCounts(live)?.id,
        counts: { unread: 0, unseen: 0 },
      });
      assert.ok(lastCounts(live)?.id, 'the first counts carry the stream’s place');
      for (const title of ['one', 'two', 'three']) {
        const id = await send('ada', title);
        ids.push(id);
        await delivered(id);
      }
      await delivered(await send('bob', 'for bob'));
      await eventually(() => messages(live).length === 3, 10_000, 'three messages on the stream');
      await eventually(() => lastCounts(live)?.type === 'counts' && lastCounts(live)?.counts.unread === 3);
      assert.deepEqual(
        messages(live).map((m) => m.item.title),
        ['one', 'two', 'three'],
      );
      const first = messages(live)[0]?.item;
      assert.equal(first?.id, ids[0]);
      assert.equal(first?.body, 'one, in full');
      assert.equal(first?.url, 'https://app.example.com/x');
      assert.deepEqual(first?.data, { n: 1 });
      assert.match(String(first?.createdAt), /^\d{4}-\d\d-\d\dT/);
      assert.equal(first?.readAt, null);
      assert.deepEqual(lastCounts(live)?.counts, { unread: 3, unseen: 3 });
      await eventually(() => messages(bobs).length === 1, 10_000, 'bob’s message');
      assert.equal(messages(bobs)[0]?.item.title, 'for bob');
    });

    it('lists newest first, pages with cursors, filters, and refuses bad queries with 400', async () => {
      const page1 = await ada('GET', '/inbox?limit=2');
      assert.equal(page1.status, 200, JSON.stringify(page1.json));
      assert.deepEqual(
        page1.json.items.map((i: { title: string }) => i.title),
        ['three', 'two'],
      );
      assert.equal(page1.json.unread, 3);
      assert.equal(page1.json.unseen, 3);
      assert.equal(typeof page1.json.nextCursor, 'string');
      const page2 = await ada('GET', `/inbox?limit=2&cursor=${page1.json.nextCursor}`);
      assert.deepEqual(
        page2.json.items.map((i: { title: string }) => i.title),
        ['one'],
      );
      assert.equal(page2.json.nextCursor, null);
      assert.deepEqual((await ada('GET', '/inbox/counts')).json, { unread: 3, unseen: 3 });
      for (const query of ['filter=read', 'limit=0', 'limit=101', 'cursor=bm9wZQ', 'other=1']) {
        const bad = await ada('GET', `/inbox?${query}`);
        assert.equal(bad.status, 400, `${query}: ${JSON.stringify(bad.json)}`);
        assert.equal(bad.json.code, 'VALIDATION_FAILED');
      }
      const bobs = await as('bob')('GET', '/inbox');
      assert.deepEqual(
        bobs.json.items.map((i: { title: string }) => i.title),
        ['for bob'],
      );
    });

    it('applies every action, answers the item, and keeps the streams’ counts current', async () => {
      const [one, two, three] = ids as [string, string, string];
      const read1 = await ada('POST', `/inbox/${one}/read`);
      assert.equal(read1.status, 200, JSON.stringify(read1.json));
      assert.equal(read1.json.id, one);
      assert.ok(read1.json.readAt && read1.json.seenAt, 'reading marks seen too');
      await eventually(() => lastCounts(live)?.counts.unread === 2, 10_000, 'counts after read');
      assert.deepEqual(lastCounts(live)?.counts, { unread: 2, unseen: 2 });

      const before = live.events.length;
      const unread = await ada('POST', `/inbox/${one}/unread`);
      assert.equal(unread.json.readAt, null);
      assert.ok(unread.json.seenAt, 'still seen');
      // unread logs no event: its counts come from this process, without an id (which would move
      // the client's place past events it may not have had).
      await eventually(
        () =>
          live.events
            .slice(before)
            .some((e) => e.type === 'counts' && e.id === undefined && e.counts.unread === 3),
        10_000,
        'counts without an id after unread',
      );
      await eventually(() => lastCounts(live)?.counts.unread === 3, 10_000, 'counts after unread');

      const seen = await ada('POST', `/inbox/${two}/seen`);
      assert.ok(seen.json.seenAt);
      assert.equal(seen.json.readAt, null);
      const archived = await ada('POST', `/inbox/${three}/archive`);
      assert.ok(archived.json.archivedAt);
      await eventually(() => lastCounts(live)?.counts.unread === 2, 10_000, 'counts after archive');
      assert.deepEqual(lastCounts(live)?.counts, { unread: 2, unseen: 0 });

      const titles = async (filter: string) =>
        (await ada('GET', `/inbox?filter=${filter}`)).json.items.map((i: { title: string }) => i.title);
      assert.deepEqual(await titles('all'), ['two', 'one']);
      assert.deepEqual(await titles('archived'), ['three']);
      assert.deepEqual(await titles('unread'), ['two', 'one']);
      assert.deepEqual(await titles('unseen'), []);

      const back = await ada('POST', `/inbox/${three}/unarchive`);
      assert.equal(back.json.archivedAt, null);
      await eventually(() => lastCounts(live)?.counts.unread === 3, 10_000, 'counts after unarchive');
      assert.deepEqual(await titles('unseen'), ['three']);

      // Another recipient's message, and one that does not exist, are alike: 404.
      for (const [who, id] of [
        ['bob', one],
        ['ada', '019b76da-a800-70e3-aa1e-88b1e3a76f06'],
      ] as const) {
        const response = await as(who)('POST', `/inbox/${id}/read`);
        assert.equal(response.status, 404, `${who} ${id}`);
        assert.equal(response.json.code, 'NOT_FOUND');
      }
      assert.deepEqual((await ada('GET', '/inbox/counts')).json, { unread: 3, unseen: 1 });

      assert.deepEqual((await ada('POST', '/inbox/seen-all')).json, { updated: 1 });
      assert.deepEqual((await ada('POST', '/inbox/read-all')).json, { updated: 3 });
      assert.deepEqual((await ada('POST', '/inbox/read-all')).json, { updated: 0 });
      assert.deepEqual((await ada('GET', '/inbox/counts')).json, { unread: 0, unseen: 0 });
      await eventually(() => lastCounts(live)?.counts.unread === 0, 10_000, 'counts after read-all');
      // Bob's inbox is untouched.
      assert.deepEqual((await as('bob')('GET', '/inbox/counts')).json, { unread: 1, unseen: 1 });
    });

    it('replays what a client missed after its Last-Event-ID, once each, then goes on live', async () => {
      const firstEvent = messages(live)[0];
      assert.ok(firstEvent?.id);
      const resumed = read('ada', firstEvent.id);
      await eventually(() => lastCounts(resumed) !== undefined, 10_000, 'the resumed stream’s counts');
      assert.deepEqual(
        messages(resumed).map((m) => m.item.title),
        ['two', 'three'],
        'every message after the id, none before it',
      );
      assert.ok(messages(resumed)[1]?.item.readAt, 'as they are now');
      const four = await send('ada', 'four');
      await eventually(() => messages(resumed).length === 3, 10_000, 'the live message after the replay');
      await eventually(() => messages(live).length === 4, 10_000, 'the live message on the first stream');
      assert.deepEqual(
        messages(resumed).map((m) => m.item.id),
        [ids[1], ids[2], four],
      );
      const eventIds = messages(resumed).map((m) => m.id);
      assert.equal(new Set(eventIds).size, eventIds.length, 'no duplicate');
      const badId = await fetch(`${herald.apiUrl}/inbox/stream`, {
        headers: { authorization: `Bearer ${tokens.ada}`, 'last-event-id': 'not-a-cursor' },
      });
      assert.equal(badId.status, 400);
    });

    it('holds at most STREAMS_PER_RECIPIENT streams of one recipient open, then 429', async () => {
      const open = () =>
        fetch(`${herald.apiUrl}/inbox/stream`, { headers: { authorization: `Bearer ${tokens.bob}` } });
      const held = herald.deps.inboxHub.held('default', 'bob');
      const extra = await Promise.all(Array.from({ length: STREAMS_PER_RECIPIENT - held }, open));
      assert.ok(extra.every((r) => r.status === 200));
      const refused = await open();
      assert.equal(refused.status, 429);
      assert.ok(refused.headers.get('retry-after'));
      await Promise.all(extra.map((r) => r.body?.cancel()));
      await eventually(() => herald.deps.inboxHub.held('default', 'bob') === held, 10_000, 'streams closed');
      const again = await open();
      assert.equal(again.status, 200, 'a closed stream frees its place');
      await again.body?.cancel();
    });
  });
}
