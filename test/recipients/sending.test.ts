// Sending to a person (docs/sending-to-people.md) end to end, on SQLite and PostgreSQL: a real Herald delivering to
// a real SMTP server. The recipient is checked at acceptance and resolved when processed (an
// address changed after the 201 is the one used), templates see the person, an opt-out ends
// SKIPPED, the one-click unsubscribe of a LOW email to a person becomes a category opt-out, and a
// bounce or complaint about the address a person resolved to suppresses that address.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Herald, startHerald } from '../../src/main.ts';
import { apiCall } from '../helpers/api-call.ts';
import { tokenFor } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { type SmtpPeer, startSmtpPeer } from '../helpers/peers/smtp.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';
import { MAILGUN_KEY, signMailgun } from '../webhooks/harness.ts';

const PUBLIC_URL = 'https://herald.example.com';

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`sending to a person (${kind})`, () => {
    let herald: Herald;
    let peer: SmtpPeer;
    let admin: string;
    before(async () => {
      peer = await startSmtpPeer({ rejectRecipients: { 'eve@bounce.example.com': 550 } });
      const env: Record<string, string> =
        kind === 'postgres'
          ? { DATABASE_URL: await (await sharedPostgres()).createDatabase('herald_people') }
          : {};
      herald = await startHerald(
        testConfig({
          ...env,
          HERALD_ROLES: 'auth,api,worker',
          HERALD_PUBLIC_URL: PUBLIC_URL,
          SMTP_URL: peer.url(),
          EMAIL_FROM: 'News <news@mail.example.com>',
          MAILGUN_WEBHOOK_SIGNING_KEY: MAILGUN_KEY,
        }),
      );
      admin = await tokenFor(herald.deps, { role: 'admin', tenant: 'default' });
      await herald.deps.store.recipients.put(
        'default',
        [
          {
            id: 'ada',
            profile: { email: 'ada@old.example.com', name: 'Ada', locale: 'fr-CA', data: { plan: 'pro' } },
          },
          { id: 'bob', profile: { email: 'bob@example.com' } },
          { id: 'cy', profile: { email: 'cy@example.com' } },
        ],
        Date.now(),
      );
    });
    after(async () => {
      await herald.close();
      await peer.close();
      if (kind === 'postgres') await stopSharedPostgres();
    });

    const call = (method: string, path: string, body?: object) =>
      apiCall(herald.apiUrl as string, admin, method, path, body);
    const email = (over: object) => ({
      channel: 'email',
      content: { subject: 'Hi', text: 'Hello' },
      ...over,
    });
    async function settled(id: string) {
      let detail: { status: string; events: Array<{ type: string; detail?: string }> } | undefined;
      await eventually(
        async () => {
          detail = (await call('GET', `/notifications/${id}`)).json;
          return ['SENT', 'FAILED', 'SKIPPED'].includes(detail?.status ?? '');
        },
        20_000,
        `notification ${id} done`,
      );
      return detail as NonNullable<typeof detail>;
    }

    it('refuses an unknown recipient with 422 RECIPIENT_NOT_FOUND and stores nothing; a batch fails those items alone', async () => {
      const refused = await call('POST', '/notifications', email({ recipient: { id: 'nobody' } }));
      assert.equal(refused.status, 422);
      assert.equal(refused.json.code, 'RECIPIENT_NOT_FOUND');
      assert.deepEqual(refused.json.errors, [
        { path: 'body/recipient/id', message: 'must name a recipient of your tenant' },
      ]);
      assert.deepEqual((await call('GET', '/notifications')).json.items, []);
      const bad = await call('POST', '/notifications', email({ recipient: { id: 'has space' } }));
      assert.equal(bad.status, 400);
      const badCategory = await call(
        'POST',
        '/notifications',
        email({ recipient: { id: 'bob' }, category: 'No' }),
      );
      assert.equal(badCategory.status, 400);

      const batch = await call('POST', '/notifications/batch', {
        notifications: [
          email({ recipient: { id: 'ghost' } }),
          email({ recipient: { id: 'bob' }, priority: 'LOW' }),
          email({ recipient: { id: 'ghost' } }),
        ],
      });
      assert.equal(batch.status, 207);
      const [first, second, third] = batch.json.results;
      assert.equal(first.error.code, 'RECIPIENT_NOT_FOUND');
      assert.equal(first.error.errors[0].path, 'body/notifications/0/recipient/id');
      assert.equal(third.error.code, 'RECIPIENT_NOT_FOUND');
      assert.equal(second.status, 'QUEUED');
      const sent = await settled(second.notificationId);
      assert.equal(sent.status, 'SENT');
      const shown = (await call('GET', `/notifications/${second.notificationId}`)).json;
      assert.deepEqual(shown.recipient, { id: 'bob' }, 'the caller’s own ID, as given');
    });

    it('reaches the address the profile has when processed, and its templates see the person', async () => {
      assert.equal((await call('POST', '/admin/queues/pause', { channel: 'email' })).status, 200);
      const accepted = await call(
        'POST',
        '/notifications',
        email({
          recipient: { id: 'ada' },
          content: {
            subject: 'Hi {{ recipient.name }}',
            text: '{{ recipient.id }} {{ recipient.locale }} {{ recipient.data.plan }} {{ preferences_url }}',
          },
        }),
      );
      assert.equal(accepted.status, 201);
      await herald.deps.store.recipients.put(
        'default',
        [
          {
            id: 'ada',
            profile: { email: 'ada@new.example.com', name: 'Ada', locale: 'fr-CA', data: { plan: 'pro' } },
          },
        ],
        Date.now(),
      );
      assert.equal((await call('POST', '/admin/queues/resume', { channel: 'email' })).status, 200);
      const detail = await settled(accepted.json.notificationId);
      assert.equal(detail.status, 'SENT');
      const mail = peer.received.find((m) => m.headers.get('subject') === 'Hi Ada');
      assert.ok(mail, 'the mail was rendered with the person');
      assert.deepEqual(mail.to, ['ada@new.example.com']);
      assert.equal(
        peer.received.some((m) => m.to.includes('ada@old.example.com')),
        false,
      );
      // The text part as sent (7bit: short ASCII lines): after the headers' blank line.
      const body = mail.raw.slice(mail.raw.indexOf('\r\n\r\n') + 4);
      const [id, locale, plan, url] =
        /ada \S+ \S+ \S+/.exec(body.replace(/=\r\n/g, ''))?.[0].split(' ') ?? [];
      assert.deepEqual([id, locale, plan], ['ada', 'fr-CA', 'pro']);
      const token = url?.slice(`${PUBLIC_URL}/preferences/`.length) ?? '';
      assert.ok(url?.startsWith(`${PUBLIC_URL}/preferences/`), url);
      assert.deepEqual(await herald.deps.preferenceTokens.open(token), { tenant: 'default', id: 'ada' });
    });

    it('ends SKIPPED with its reason for an opt-out, and the one-click unsubscribe of a LOW email opts the person out', async () => {
      const low = await call(
        'POST',
        '/notifications',
        email({ recipient: { id: 'cy' }, priority: 'LOW', category: 'news' }),
      );
      assert.equal((await settled(low.json.notificationId)).status, 'SENT');
      const mail = peer.received.findLast((m) => m.to.includes('cy@example.com'));
      const header = mail?.headers.get('list-unsubscribe') ?? '';
      const path = /^<https:\/\/herald\.example\.com(\/unsubscribe\/[A-Za-z0-9_-]+)>$/.exec(header)?.[1];
      assert.ok(path, header);
      const posted = await fetch(`${herald.apiUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'List-Unsubscribe=One-Click',
      });
      assert.equal(posted.status, 200);
      const cy = await herald.deps.store.recipients.get('default', 'cy');
      assert.deepEqual(cy?.preferences, { channels: {}, categories: { news: { email: false } } });
      assert.deepEqual((await call('GET', '/suppressions?channel=email')).json.items, [], 'no suppression');

      const again = await call(
        'POST',
        '/notifications',
        email({ recipient: { id: 'cy' }, category: 'news' }),
      );
      const skipped = await settled(again.json.notificationId);
      assert.equal(skipped.status, 'SKIPPED');
      assert.equal(skipped.events.at(-1)?.detail, 'opted out of news on email');
      const other = await call(
        'POST',
        '/notifications',
        email({ recipient: { id: 'cy' }, category: 'billing' }),
      );
      assert.equal((await settled(other.json.notificationId)).status, 'SENT', 'another category still goes');
    });

    it('takes the category of the template version it pins when it names none: preferences, SKIPPED and GET use it', async () => {
      await call('PUT', '/recipients/dee', { email: 'dee@example.com' });
      await call('PUT', '/recipients/dee/preferences', {
        channels: {},
        categories: { digest: { email: false } },
      });
      const made = await call('POST', '/templates', {
        key: 'weekly',
        channel: 'email',
        subject: 'Week',
        text: 'News',
        category: 'digest',
      });
      assert.equal(made.status, 201);
      assert.equal(made.json.category, 'digest');
      const byTemplate = await call('POST', '/notifications', {
        channel: 'email',
        template: 'weekly',
        recipient: { id: 'dee' },
      });
      const skipped = await settled(byTemplate.json.notificationId);
      assert.equal(skipped.status, 'SKIPPED');
      assert.equal(skipped.events.at(-1)?.detail, 'opted out of digest on email');
      assert.equal((skipped as { category?: string }).category, 'digest');
      const own = await call('POST', '/notifications', {
        channel: 'email',
        template: 'weekly',
        recipient: { id: 'dee' },
        category: 'billing',
      });
      const sent = await settled(own.json.notificationId);
      assert.equal(sent.status, 'SENT', 'its own category wins');
      assert.equal((sent as { category?: string }).category, 'billing');
      // A new version without a default: a notification accepted on it has none, and v1 keeps its.
      const v2 = await call('PUT', '/templates/weekly', { subject: 'Week', text: 'News', category: null });
      assert.equal(v2.json.category, null);
      const kept = await call('PUT', '/templates/weekly', { subject: 'Week 3', text: 'News' });
      assert.equal(kept.json.category, null, 'a PUT without category keeps the current one');
      const plain = await call('POST', '/notifications', {
        channel: 'email',
        template: 'weekly',
        recipient: { id: 'dee' },
      });
      const plainDone = await settled(plain.json.notificationId);
      assert.equal(plainDone.status, 'SENT');
      assert.equal((plainDone as { category?: string | null }).category, null);
      const bad = await call('PUT', '/templates/weekly', { subject: 'W', text: 'N', category: 'Has Space' });
      assert.equal(bad.status, 400);
    });

    it("suppresses the address a person's notification went to on a bounce (SMTP 550) or a complaint (webhook)", async () => {
      const suppressed = async (address: string) =>
        (
          await herald.deps.store.suppressions.match([
            { tenant: 'default', channel: 'email', recipient: address },
          ])
        )[0]?.reason;
      await call('PUT', '/recipients/eve', { email: 'Eve@bounce.example.com' });
      await call('PUT', '/recipients/fay', { email: 'fay@example.com' });
      const bounced = await settled(
        (await call('POST', '/notifications', email({ recipient: { id: 'eve' } }))).json.notificationId,
      );
      assert.equal(bounced.status, 'FAILED');
      assert.equal(await suppressed('eve@bounce.example.com'), 'bounce');

      const sent = await settled(
        (await call('POST', '/notifications', email({ recipient: { id: 'fay' } }))).json.notificationId,
      );
      assert.equal(sent.status, 'SENT');
      const messageId = (sent as { providerMessageId?: string }).providerMessageId;
      assert.ok(messageId);
      const complaint = await fetch(`${herald.apiUrl}/webhooks/mailgun`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          signature: signMailgun(undefined, String(Math.floor(Date.now() / 1000))),
          'event-data': {
            event: 'complained',
            timestamp: Date.now() / 1000,
            message: { headers: { 'message-id': messageId } },
          },
        }),
      });
      assert.equal(complaint.status, 200, await complaint.text());
      assert.equal(await suppressed('fay@example.com'), 'complaint');

      // The next notification to either person is stopped by its address's suppression.
      for (const id of ['eve', 'fay']) {
        const next = await settled(
          (await call('POST', '/notifications', email({ recipient: { id } }))).json.notificationId,
        );
        assert.equal(next.status, 'FAILED', id);
        assert.match(next.events.at(-1)?.detail ?? '', /suppress/, id);
      }
    });
  });
}
