// The `inapp` channel end to end (docs/inbox.md), on SQLite and PostgreSQL: a real Herald (API
// and worker) stores each message in its recipient's inbox with DELIVERED (source inbox); the
// reader's SEEN / READ / ARCHIVED reach GET /notifications/{id} and a real HTTPS callback receiver.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Herald, startHerald } from '../../src/main.ts';
import { apiCall } from '../helpers/api-call.ts';
import { tokenFor } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { type CallbackReceiver, startCallbackReceiver } from '../helpers/peers/callback-receiver.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';
import { openStream } from '../streams/sse-client.ts';

interface Detail {
  status: string;
  provider: string | null;
  events: Array<{ type: string; source?: string; locale?: string; detail?: string }>;
}

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`the inapp channel (${kind})`, () => {
    let herald: Herald;
    let receiver: CallbackReceiver;
    let admin: string;
    before(async () => {
      receiver = await startCallbackReceiver();
      const env: Record<string, string> =
        kind === 'postgres'
          ? { DATABASE_URL: await (await sharedPostgres()).createDatabase('herald_inapp') }
          : {};
      herald = await startHerald(
        testConfig({
          ...env,
          HERALD_ROLES: 'auth,api,worker',
          HERALD_CALLBACK_ALLOWED_HOSTS: receiver.host,
          // A render thread's first template on a loaded machine: not what this file tests.
          HERALD_RENDER_TIMEOUT_MS: '10000',
        }),
      );
      admin = await tokenFor(herald.deps, { role: 'admin', tenant: 'default' });
      const { recipients } = herald.deps.store;
      const now = Date.now();
      await recipients.put(
        'default',
        [
          { id: 'ada', profile: { name: 'Ada', locale: 'fr-CA' } },
          { id: 'bob', profile: { email: 'bob@example.com' } },
          { id: 'cy', profile: {} },
        ],
        now,
      );
      await recipients.setPreferences('default', 'bob', { channels: { inapp: false }, categories: {} }, now);
    });
    after(async () => {
      await herald.close();
      await receiver.close();
      if (kind === 'postgres') await stopSharedPostgres();
    });

    const call = (method: string, path: string, body?: object) =>
      apiCall(herald.apiUrl as string, admin, method, path, body);
    const inapp = (over: object = {}) => ({
      channel: 'inapp',
      recipient: { id: 'ada' },
      content: { title: 'Order shipped', body: 'It is on its way' },
      ...over,
    });
    async function send(body: object): Promise<string> {
      const accepted = await call('POST', '/notifications', body);
      assert.equal(accepted.status, 201, JSON.stringify(accepted.json));
      return accepted.json.notificationId;
    }
    async function settled(id: string): Promise<Detail> {
      let detail: Detail | undefined;
      await eventually(
        async () => {
          detail = (await call('GET', `/notifications/${id}`)).json;
          return ['DELIVERED', 'FAILED', 'SKIPPED'].includes(detail?.status ?? '');
        },
        20_000,
        `notification ${id} done`,
      );
      return detail as Detail;
    }
    const inbox = (id: string, filter: 'all' | 'archived' = 'all') =>
      herald.deps.store.inbox.list('default', id, { filter, limit: 50 });

    it('stores the message in the inbox: DELIVERED (source inbox, no provider), inline and from a template', async () => {
      const inline = await send(
        inapp({
          content: { title: 'Hi {{ who }}', body: 'Order {{ n }}', url: '/orders/{{ n }}', data: { n: 42 } },
          variables: { who: 'you', n: 42 },
          category: 'orders',
        }),
      );
      const done = await settled(inline);
      assert.equal(done.status, 'DELIVERED');
      assert.equal(done.provider, null);
      assert.deepEqual(
        done.events.map((e) => [e.type, e.source]),
        [
          ['QUEUED', undefined],
          ['PROCESSING', undefined],
          ['DELIVERED', 'inbox'],
        ],
      );
      const [stored] = await inbox('ada');
      assert.equal(stored?.id, inline);
      assert.deepEqual(
        [stored?.title, stored?.body, stored?.url, stored?.data, stored?.category, stored?.readAt],
        ['Hi you', 'Order 42', '/orders/42', { n: 42 }, 'orders', null],
      );

      const template = await call('POST', '/templates', {
        key: 'shipped',
        channel: 'inapp',
        title: 'Bonjour {{ recipient.name }}',
        body: 'Commande {{ n }}',
        url: 'https://shop.example.com/o/{{ n }}',
        // Kept as given, Liquid included: data is JSON, not a template (docs/inbox.md).
        data: { kind: 'order', tags: ['{{ n }}'] },
      });
      assert.equal(template.status, 201, JSON.stringify(template.json));
      assert.deepEqual(template.json.data, { kind: 'order', tags: ['{{ n }}'] });
      const templated = await send({
        channel: 'inapp',
        recipient: { id: 'ada' },
        template: 'shipped',
        variables: { n: 7 },
      });
      const fromTemplate = await settled(templated);
      assert.equal(fromTemplate.status, 'DELIVERED', JSON.stringify(fromTemplate.events));
      const [latest] = await inbox('ada');
      assert.deepEqual(
        [latest?.id, latest?.title, latest?.body, latest?.url, latest?.data],
        [
          templated,
          'Bonjour Ada',
          'Commande 7',
          'https://shop.example.com/o/7',
          { kind: 'order', tags: ['{{ n }}'] },
        ],
      );
      // data is inapp's alone, and must be an object.
      const email = await call('POST', '/templates', {
        key: 'mail',
        channel: 'email',
        subject: 'S',
        text: 'T',
        data: {},
      });
      assert.equal(email.status, 400);
      assert.deepEqual(
        email.json.errors.map((e: { path: string }) => e.path),
        ['body/data'],
      );
      const notObject = await call('POST', '/templates', {
        key: 'list',
        channel: 'inapp',
        title: 'T',
        body: 'B',
        data: [1],
      });
      assert.equal(notObject.status, 400);
      // A template's fields fit the channel.
      const wrong = await call('POST', '/templates', {
        key: 'bad',
        channel: 'inapp',
        title: 'T',
        subject: 'S',
      });
      assert.equal(wrong.status, 400);
      assert.deepEqual(
        wrong.json.errors.map((e: { path: string }) => e.path),
        ['body/subject', 'body/body'],
      );
      // A link made by Liquid that is no link fails that notification alone, when rendered.
      const badLink = await send(
        inapp({
          content: { title: 'T', body: 'B', url: '{{ u }}' },
          variables: { u: 'javascript:alert(1)' },
        }),
      );
      const failed = await settled(badLink);
      assert.equal(failed.status, 'FAILED');
      assert.match(failed.events.at(-1)?.detail ?? '', /url must be an http\(s\) URL or a path/);
    });

    it('refuses an address, a bad link or an unknown recipient on inapp (4xx problem) and stores nothing', async () => {
      const before = (await call('GET', '/notifications?channel=inapp&limit=500')).json.items.length;
      const address = await call(
        'POST',
        '/notifications',
        inapp({ recipient: { email: 'ada@example.com' } }),
      );
      assert.equal(address.status, 400);
      assert.equal(address.json.code, 'VALIDATION_FAILED');
      assert.ok(
        address.json.errors.some((e: { path: string }) => e.path === 'body/recipient/email'),
        JSON.stringify(address.json.errors),
      );
      const link = await call(
        'POST',
        '/notifications',
        inapp({ content: { title: 'T', body: 'B', url: 'javascript:alert(1)' } }),
      );
      assert.equal(link.status, 400);
      assert.deepEqual(link.json.errors, [
        { path: 'body/content/url', message: 'must be an http(s) URL or a path starting with /' },
      ]);
      const unknown = await call('POST', '/notifications', inapp({ recipient: { id: 'nobody' } }));
      assert.equal(unknown.status, 422);
      assert.equal((await call('GET', '/notifications?channel=inapp&limit=500')).json.items.length, before);
    });

    it('skips a recipient who opted out of inapp, unless CRITICAL; a deleted recipient is skipped and erased', async () => {
      const optedOut = await settled(await send(inapp({ recipient: { id: 'bob' } })));
      assert.equal(optedOut.status, 'SKIPPED');
      assert.match(optedOut.events.at(-1)?.detail ?? '', /opted out/);
      const critical = await settled(await send(inapp({ recipient: { id: 'bob' }, priority: 'CRITICAL' })));
      assert.equal(critical.status, 'DELIVERED');
      assert.equal((await inbox('bob')).length, 1);

      await settled(await send(inapp({ recipient: { id: 'cy' } })));
      assert.equal((await inbox('cy')).length, 1);
      assert.equal((await call('POST', '/admin/queues/pause', { channel: 'inapp' })).status, 200);
      const waiting = await send(inapp({ recipient: { id: 'cy' } }));
      assert.equal((await call('DELETE', '/recipients/cy')).status, 204);
      assert.deepEqual(await inbox('cy'), [], 'erased with the recipient');
      assert.equal((await call('POST', '/admin/queues/resume', { channel: 'inapp' })).status, 200);
      const skipped = await settled(waiting);
      assert.equal(skipped.status, 'SKIPPED');
      assert.deepEqual(await inbox('cy'), []);
    });

    it('shows 16 queues, inapp among them, paused and resumed by channel', async () => {
      const { queues } = (await call('GET', '/admin/queues')).json;
      assert.equal(queues.length, 16);
      assert.deepEqual(
        queues
          .filter((q: { channel: string }) => q.channel === 'inapp')
          .map((q: { priority: string }) => q.priority),
        ['CRITICAL', 'HIGH', 'NORMAL', 'LOW'],
      );
      const paused = (await call('POST', '/admin/queues/pause', { channel: 'inapp', priority: 'LOW' })).json
        .queues;
      assert.deepEqual(
        paused
          .filter((q: { paused: boolean }) => q.paused)
          .map((q: { channel: string; priority: string }) => `${q.priority}/${q.channel}`),
        ['LOW/inapp'],
      );
      await call('POST', '/admin/queues/resume', {});
    });

    it("logs the reader's SEEN, READ, ARCHIVED once each, shown by the notification and sent to a callback that asks", async () => {
      const created = await call('POST', '/callbacks', { url: `${receiver.origin}/reads`, events: ['READ'] });
      assert.equal(created.status, 201, JSON.stringify(created.json));
      const id = await send(inapp({ metadata: { order: 9 } }));
      await settled(id);
      const stream = openStream(`${herald.apiUrl}/notifications/stream?notificationId=${id}`, admin);
      await stream.opened;
      const { inbox: store } = herald.deps.store;
      const now = Date.now();
      assert.equal((await store.act('default', 'ada', id, 'read', now))?.changed, true);
      assert.equal((await store.act('default', 'ada', id, 'read', now + 1))?.changed, false, 'a second read');
      assert.equal((await store.act('default', 'ada', id, 'archive', now + 2))?.changed, true);
      const detail = (await call('GET', `/notifications/${id}`)).json as Detail;
      assert.equal(detail.status, 'DELIVERED');
      assert.deepEqual(detail.events.map((e) => e.type).slice(-4), ['DELIVERED', 'SEEN', 'READ', 'ARCHIVED']);
      await eventually(async () => receiver.at('/reads').length > 0, 20_000, 'the READ callback');
      const body = JSON.parse(receiver.at('/reads')[0]?.body as string);
      assert.equal(body.type, 'notification.status');
      assert.deepEqual(
        [
          body.data.notificationId,
          body.data.status,
          body.data.previousStatus,
          body.data.event.type,
          body.data.metadata,
        ],
        [id, 'DELIVERED', 'DELIVERED', 'READ', { order: 9 }],
      );
      assert.equal(receiver.at('/reads').length, 1, 'only READ, once');
      // The live stream reports each, the status unchanged.
      const reading = () => stream.received.filter(({ change }) => change.event.type !== 'DELIVERED');
      await eventually(async () => reading().length >= 3, 20_000, 'the stream');
      stream.close();
      assert.deepEqual(
        reading().map(({ change }) => `${change.previousStatus}>${change.status} ${change.event.type}`),
        ['DELIVERED>DELIVERED SEEN', 'DELIVERED>DELIVERED READ', 'DELIVERED>DELIVERED ARCHIVED'],
      );
    });
  });
}
