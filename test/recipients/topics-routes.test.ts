// #50 (docs/topics.md): the /topics and /broadcasts routes on both
// databases: CRUD, scopes, bad input answered 4xx problem+json with nothing changed, the
// subscribers batch with its refusals, a broadcast fanned out to exactly one notification per
// subscriber, its counts, its notifications listed by broadcastId, and its cancel.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { authHeader } from '../helpers/auth.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';
import { notificationsApp } from '../notifications/fixtures.ts';

type T = Awaited<ReturnType<typeof notificationsApp>>;
type Headers = Record<string, string>;

const DATABASES = ['sqlite', 'postgres'] as const;

after(stopSharedPostgres);

for (const database of DATABASES) {
  describe(`topics and broadcasts over HTTP (${database})`, () => {
    let t: T;
    before(async () => {
      const env: Record<string, string> =
        database === 'postgres'
          ? { DATABASE_URL: await (await sharedPostgres()).createDatabase('herald_topics') }
          : {};
      t = await notificationsApp(env);
    });
    after(() => t.close());

    const call = async (headers: Headers, method: string, url: string, payload?: unknown) => {
      const answer = await t.app.inject({
        method: method as 'GET',
        url,
        headers,
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
      return { status: answer.statusCode, body: answer.body ? answer.json() : undefined, answer };
    };
    const problem = (r: { status: number; answer: { headers: Record<string, unknown> } }, status: number) => {
      assert.equal(r.status, status);
      assert.match(String(r.answer.headers['content-type']), /application\/problem\+json/);
    };
    /** Recipients of the admin's tenant, through the store (h1 owns their routes). */
    const people = async (ids: string[], tenant = 'default') => {
      await t.deps.store.recipients.put(
        tenant,
        ids.map((id) => ({ id, profile: { email: `${id}@example.com` } })),
        t.clock.now(),
      );
    };
    const fanOut = async () => {
      while ((await t.deps.store.broadcasts.step(t.clock.now(), 500)) !== null);
    };

    it('creates, renames, lists, reads and deletes a topic; another tenant sees none of it', async () => {
      const made = await call(t.admin, 'PUT', '/topics/news', { name: 'News' });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      assert.equal(made.answer.headers.location, '/topics/news');
      assert.equal(made.body.key, 'news');
      assert.equal(made.body.name, 'News');
      assert.equal(made.body.subscribers, 0);
      const renamed = await call(t.admin, 'PUT', '/topics/news', { name: 'All the news' });
      assert.equal(renamed.status, 200);
      assert.equal(renamed.body.createdAt, made.body.createdAt);
      assert.equal((await call(t.admin, 'PUT', '/topics/alerts', {})).status, 201);
      const list = await call(t.admin, 'GET', '/topics?limit=1');
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.items.map((x: { key: string }) => x.key),
        ['alerts'],
      );
      const next = await call(t.admin, 'GET', `/topics?limit=1&cursor=${list.body.nextCursor}`);
      assert.deepEqual(
        next.body.items.map((x: { key: string }) => x.key),
        ['news'],
      );
      assert.equal((await call(t.admin, 'GET', '/topics/news')).body.name, 'All the news');
      problem(await call(t.other, 'GET', '/topics/news'), 404);
      problem(await call(t.other, 'DELETE', '/topics/news'), 404);
      assert.equal((await call(t.admin, 'DELETE', '/topics/alerts')).status, 204);
      problem(await call(t.admin, 'GET', '/topics/alerts'), 404);
    });

    it('needs recipients:write to change topics and recipients:read to read them', async () => {
      const viewer = await authHeader(t.deps, { role: 'viewer' });
      problem(await call(t.sender, 'PUT', '/topics/sender-topic', {}), 403);
      problem(await call(viewer, 'GET', '/topics'), 403);
      problem(await call(viewer, 'GET', '/broadcasts/x'), 404);
    });

    it('answers bad input with 400 problem+json and changes nothing', async () => {
      problem(await call(t.admin, 'PUT', '/topics/has%20space', {}), 400);
      problem(await call(t.admin, 'PUT', '/topics/ok', { name: 'x', extra: 1 }), 400);
      problem(await call(t.admin, 'GET', '/topics/ok'), 404);
      await call(t.admin, 'PUT', '/topics/batch', {});
      const tooMany = Array.from({ length: 1001 }, (_, i) => `r${i}`);
      problem(await call(t.admin, 'POST', '/topics/batch/subscribers', { recipients: tooMany }), 400);
      problem(await call(t.admin, 'POST', '/topics/batch/subscribers', { recipients: ['bad id'] }), 400);
      problem(await call(t.admin, 'POST', '/topics/batch/subscribers', { recipients: [] }), 400);
      problem(await call(t.admin, 'GET', '/topics?cursor=forged'), 400);
      assert.equal((await call(t.admin, 'GET', '/topics/batch')).body.subscribers, 0);
    });

    it('subscribes in batches, refusing unknown recipients one by one, and unsubscribes', async () => {
      await people(['ada', 'bob', 'cy']);
      await people(['eve'], 'other');
      await call(t.admin, 'PUT', '/topics/team', {});
      const added = await call(t.admin, 'POST', '/topics/team/subscribers', {
        recipients: ['ada', 'ghost', 'bob', 'ada', 'eve'],
      });
      assert.equal(added.status, 200, JSON.stringify(added.body));
      assert.deepEqual(added.body, {
        added: 2,
        refused: [
          { recipientId: 'ghost', code: 'RECIPIENT_NOT_FOUND' },
          { recipientId: 'eve', code: 'RECIPIENT_NOT_FOUND' },
        ],
      });
      const again = await call(t.admin, 'POST', '/topics/team/subscribers', { recipients: ['bob', 'cy'] });
      assert.deepEqual(again.body, { added: 1, refused: [] });
      assert.equal((await call(t.admin, 'GET', '/topics/team')).body.subscribers, 3);
      const page = await call(t.admin, 'GET', '/topics/team/subscribers?limit=2');
      assert.deepEqual(
        page.body.items.map((s: { recipientId: string }) => s.recipientId),
        ['ada', 'bob'],
      );
      const rest = await call(
        t.admin,
        'GET',
        `/topics/team/subscribers?limit=2&cursor=${page.body.nextCursor}`,
      );
      assert.deepEqual(
        rest.body.items.map((s: { recipientId: string }) => s.recipientId),
        ['cy'],
      );
      assert.equal(rest.body.nextCursor, null);
      assert.equal((await call(t.admin, 'DELETE', '/topics/team/subscribers/bob')).status, 204);
      problem(await call(t.admin, 'DELETE', '/topics/team/subscribers/bob'), 404);
      problem(await call(t.admin, 'POST', '/topics/nope/subscribers', { recipients: ['ada'] }), 404);
      problem(await call(t.other, 'GET', '/topics/team/subscribers'), 404);
      assert.equal((await call(t.admin, 'GET', '/topics/team')).body.subscribers, 2);
    });

    const body = (over: Record<string, unknown> = {}) => ({
      topic: 'crowd',
      channel: 'email',
      priority: 'LOW',
      content: { subject: 'Hello {{ who }}', text: 'News' },
      variables: { who: 'all' },
      metadata: { campaign: 'nov' },
      ...over,
    });

    it('refuses a bad broadcast with 4xx problem+json and stores nothing', async () => {
      await call(t.admin, 'PUT', '/topics/empty', {});
      problem(await call(t.sender, 'POST', '/broadcasts', body({ topic: 'nowhere' })), 404);
      const empty = await call(t.sender, 'POST', '/broadcasts', body({ topic: 'empty' }));
      problem(empty, 400);
      assert.equal(empty.body.errors[0].path, 'body/topic');
      const bad = await call(
        t.sender,
        'POST',
        '/broadcasts',
        body({ channel: 'fax', category: 'Has Space', recipient: { email: 'a@example.com' } }),
      );
      problem(bad, 400);
      const paths = bad.body.errors.map((e: { path: string }) => e.path);
      for (const path of ['body/channel', 'body/category', 'body/recipient'])
        assert.ok(paths.includes(path), paths);
      problem(await call(t.sender, 'POST', '/broadcasts', body({ content: { subject: '{% if %}' } })), 400);
      problem(
        await call(t.sender, 'POST', '/broadcasts', body({ content: undefined, template: 'nope' })),
        422,
      );
      problem(await call(t.viewer, 'POST', '/broadcasts', body()), 403);
      assert.equal(await t.deps.store.broadcasts.hasWork(), false);
    });

    it('answers 201 at once, then makes one notification per subscriber, counted by status', async () => {
      const ids = Array.from({ length: 1203 }, (_, i) => `p${String(i).padStart(4, '0')}`);
      await people(ids);
      await call(t.admin, 'PUT', '/topics/crowd', {});
      for (let i = 0; i < ids.length; i += 1000) {
        await call(t.admin, 'POST', '/topics/crowd/subscribers', { recipients: ids.slice(i, i + 1000) });
      }
      const accepted = await call(t.sender, 'POST', '/broadcasts', body());
      assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
      assert.equal(accepted.body.status, 'QUEUED');
      const id = accepted.body.broadcastId as string;
      assert.equal(accepted.answer.headers.location, `/broadcasts/${id}`);
      const queued = await call(t.sender, 'GET', `/broadcasts/${id}`);
      assert.deepEqual(queued.body, {
        broadcastId: id,
        status: 'QUEUED',
        topic: 'crowd',
        recipients: null,
        created: 0,
        counts: {},
      });
      await fanOut();
      const done = await call(t.viewer, 'GET', `/broadcasts/${id}`);
      assert.deepEqual(done.body, {
        broadcastId: id,
        status: 'DONE',
        topic: 'crowd',
        recipients: 1203,
        created: 1203,
        counts: { QUEUED: 1203 },
      });
      problem(await call(t.other, 'GET', `/broadcasts/${id}`), 404);
      const listed = await call(t.viewer, 'GET', `/notifications?broadcastId=${id}&limit=500`);
      assert.equal(listed.body.items.length, 500);
      assert.ok(listed.body.items.every((n: { broadcastId: string }) => n.broadcastId === id));
      const one = await call(t.viewer, 'GET', `/notifications/${listed.body.items[0].notificationId}`);
      assert.equal(one.body.broadcastId, id);
      assert.equal(one.body.priority, 'LOW');
      assert.deepEqual(one.body.metadata, { campaign: 'nov' });
      const stored = await t.deps.store.notifications.get('default', one.body.notificationId);
      assert.ok(ids.includes(stored?.record.recipient.id as string));
      // Exactly one each.
      const recipients = new Set<string>();
      let cursor = '';
      for (;;) {
        const page = await call(t.viewer, 'GET', `/notifications?broadcastId=${id}&limit=500${cursor}`);
        for (const n of page.body.items) {
          const got = await t.deps.store.notifications.get('default', n.notificationId);
          const who = got?.record.recipient.id as string;
          assert.ok(!recipients.has(who), `${who} got two`);
          recipients.add(who);
        }
        if (page.body.nextCursor === null) break;
        cursor = `&cursor=${page.body.nextCursor}`;
      }
      assert.equal(recipients.size, 1203);
      // Others' notifications are not listed with it.
      assert.equal((await call(t.other, 'GET', `/notifications?broadcastId=${id}`)).body.items.length, 0);
    });

    it("reuses a broadcast's counts ten times as long as their read took, when over two seconds", async () => {
      const ids = ['slow-1', 'slow-2'];
      await people(ids);
      await call(t.admin, 'PUT', '/topics/slow', {});
      await call(t.admin, 'POST', '/topics/slow/subscribers', { recipients: ids });
      const accepted = await call(t.sender, 'POST', '/broadcasts', body({ topic: 'slow' }));
      assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
      await fanOut();
      const broadcasts = t.deps.store.broadcasts;
      const real = broadcasts.counts;
      let reads = 0;
      // A read of 250 ms: reused for 2.5 s at least.
      broadcasts.counts = async (tenant, id) => {
        reads++;
        await new Promise((resolve) => setTimeout(resolve, 250));
        return real(tenant, id);
      };
      try {
        const url = `/broadcasts/${accepted.body.broadcastId}`;
        assert.deepEqual((await call(t.viewer, 'GET', url)).body.counts, { QUEUED: 2 });
        t.clock.advance(2200);
        assert.deepEqual((await call(t.viewer, 'GET', url)).body.counts, { QUEUED: 2 });
        assert.equal(reads, 1, 'reused past two seconds');
        t.clock.advance(30_000);
        assert.deepEqual((await call(t.viewer, 'GET', url)).body.counts, { QUEUED: 2 });
        assert.equal(reads, 2, 'read again once stale');
      } finally {
        broadcasts.counts = real;
      }
    });

    it("gives each notification the broadcast's category and locale, so preferences and variants apply", async () => {
      await people(['cl-1', 'cl-2']);
      await call(t.admin, 'PUT', '/topics/localized', {});
      await call(t.admin, 'POST', '/topics/localized/subscribers', { recipients: ['cl-1', 'cl-2'] });
      const accepted = await call(t.sender, 'POST', '/broadcasts', {
        ...body(),
        topic: 'localized',
        category: 'news',
        // Stored canonical, as a notification's: variants are found by the canonical tag.
        locale: 'fr-ca',
      });
      assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
      await fanOut();
      const listed = await call(t.viewer, 'GET', `/notifications?broadcastId=${accepted.body.broadcastId}`);
      assert.equal(listed.body.items.length, 2);
      for (const item of listed.body.items as Array<{ notificationId: string }>) {
        const stored = await t.deps.store.notifications.get('default', item.notificationId);
        assert.equal(stored?.record.category, 'news');
        assert.equal(stored?.record.locale, 'fr-CA');
      }
    });

    it('cancels a broadcast: the fan-out stops and its waiting notifications are cancelled', async () => {
      const ids = Array.from({ length: 700 }, (_, i) => `c${String(i).padStart(4, '0')}`);
      await people(ids);
      await call(t.admin, 'PUT', '/topics/cancel-me', {});
      await call(t.admin, 'POST', '/topics/cancel-me/subscribers', { recipients: ids.slice(0, 1000) });
      const accepted = await call(t.sender, 'POST', '/broadcasts', body({ topic: 'cancel-me' }));
      const id = accepted.body.broadcastId as string;
      await t.deps.store.broadcasts.step(t.clock.now(), 500);
      problem(await call(t.other, 'POST', `/broadcasts/${id}/cancel`), 404);
      const cancelled = await call(t.sender, 'POST', `/broadcasts/${id}/cancel`);
      assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
      assert.equal(cancelled.body.status, 'CANCELLED');
      await fanOut();
      // Counts are reused for two seconds while the status stays (broadcast-routes.ts).
      t.clock.advance(2001);
      const after = await call(t.sender, 'GET', `/broadcasts/${id}`);
      assert.equal(after.body.status, 'CANCELLED');
      assert.equal(after.body.created, 500);
      assert.deepEqual(after.body.counts, { CANCELLED: 500 });
    });
  });
}
