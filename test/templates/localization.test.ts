// Localization (docs/localization.md) end to end, on SQLite and on PostgreSQL: locale variants of a
// template, a notification's `locale`, the closest variant rendered by the real worker to a real
// SMTP server, the locale it used on the SENT event, and variants pinned with their version.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Herald, startHerald } from '../../src/main.ts';
import { apiCall } from '../helpers/api-call.ts';
import { tokenFor } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { type SmtpPeer, startSmtpPeer } from '../helpers/peers/smtp.ts';
import { type PostgresServer, sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';

interface Event {
  type: string;
  locale?: string;
}

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`localization (${kind})`, () => {
    let server: PostgresServer | undefined;
    let herald: Herald;
    let peer: SmtpPeer;
    let admin: string;
    /** An admin of tenant `default`: queues are paused for every tenant. */
    let operator: string;
    before(async () => {
      peer = await startSmtpPeer();
      if (kind === 'postgres') server = await sharedPostgres();
      const database = server ? { DATABASE_URL: await server.createDatabase('herald_locale') } : {};
      herald = await startHerald(
        testConfig({
          HERALD_ROLES: 'auth,api,worker',
          SMTP_URL: peer.url(),
          EMAIL_FROM: 'Herald <herald@example.com>',
          ...database,
        }),
      );
      admin = await tokenFor(herald.deps, { role: 'admin', tenant: 'acme' });
      operator = await tokenFor(herald.deps, { role: 'admin' });
    });
    after(async () => {
      await herald?.close();
      await peer?.close();
      if (server) await stopSharedPostgres();
    });

    const call = (method: string, path: string, body?: object, token = admin) =>
      apiCall(herald.apiUrl as string, token, method, path, body);

    /** Sends a welcome email to `to` and waits until it is SENT; its detail and the mail received. */
    async function sent(to: string, extra: object = {}) {
      const accepted = await call('POST', '/notifications', {
        channel: 'email',
        recipient: { email: to },
        template: 'welcome',
        variables: { name: 'Ada' },
        ...extra,
      });
      assert.equal(accepted.status, 201, JSON.stringify(accepted.json));
      return settle(accepted.json.notificationId, to);
    }
    async function settle(id: string, to: string) {
      let detail: { status: string; locale: string | null; events: Event[] } | undefined;
      await eventually(
        async () => {
          detail = (await call('GET', `/notifications/${id}`)).json;
          return detail?.status === 'SENT' || detail?.status === 'FAILED';
        },
        20_000,
        `notification ${id} sent`,
      );
      const mail = peer.received.findLast((m) => m.to.includes(to));
      assert.ok(mail, `a mail to ${to}`);
      const done = detail as NonNullable<typeof detail>;
      return {
        detail: done,
        subject: mail.headers.get('subject'),
        sentEvent: done.events.find((e) => e.type === 'SENT'),
      };
    }

    it('lists, replaces and deletes locale variants, each change a new version', async () => {
      const created = await call('POST', '/templates', {
        key: 'welcome',
        channel: 'email',
        subject: 'Hello {{ name }}',
        text: 'Welcome',
      });
      assert.equal(created.status, 201);
      assert.deepEqual(created.json.locales, []);
      const fr = await call('PUT', '/templates/welcome/locales/fr', {
        subject: 'Salut {{ name }}',
        text: 'Bienvenue',
      });
      assert.equal(fr.status, 200, JSON.stringify(fr.json));
      assert.equal(fr.json.version, 2);
      assert.equal(fr.json.subject, 'Hello {{ name }}', 'the template itself is unchanged');
      const ptBr = await call('PUT', '/templates/welcome/locales/pt-br', { subject: 'Oi', text: 'x' });
      assert.equal(ptBr.status, 200);
      assert.deepEqual(
        ptBr.json.locales.map((l: { locale: string }) => l.locale),
        ['fr', 'pt-BR'],
        'stored canonical',
      );
      const got = await call('GET', '/templates/welcome');
      assert.equal(got.json.version, 3);
      assert.equal(got.json.locales[0].subject, 'Salut {{ name }}');
      const listed = await call('GET', '/templates');
      assert.equal(listed.json.items.find((t: { key: string }) => t.key === 'welcome').locales.length, 2);
      assert.equal((await call('DELETE', '/templates/welcome/locales/PT-br')).status, 204);
      const gone = await call('DELETE', '/templates/welcome/locales/pt-BR');
      assert.equal(gone.status, 404);
      assert.match(gone.json.detail, /no "pt-BR" locale variant/);
      const now = await call('GET', '/templates/welcome');
      assert.equal(now.json.version, 4);
      assert.deepEqual(
        now.json.locales.map((l: { locale: string }) => l.locale),
        ['fr'],
      );
      // Then fr is replaced: the version the next tests start from.
      const bonjour = await call('PUT', '/templates/welcome/locales/fr', {
        subject: 'Bonjour {{ name }}',
        text: 'Bienvenue',
      });
      assert.equal(bonjour.json.version, 5);
    });

    it("checks a variant's content as a template's and refuses what does not fit, changing nothing", async () => {
      const cases: Array<[string, object, number, string]> = [
        ['/templates/welcome/locales/de', { text: 'no subject' }, 400, 'body/subject'],
        ['/templates/welcome/locales/de', { subject: 'Hallo {{ name', text: 'x' }, 400, 'body/subject'],
        ['/templates/welcome/locales/de', { subject: 'x', title: 'push only' }, 400, 'body/title'],
        ['/templates/welcome/locales/de', { subject: 'x', text: 'x', channel: 'sms' }, 400, 'body'],
        ['/templates/welcome/locales/not_a_tag', { subject: 'x', text: 'x' }, 400, 'params/locale'],
        ['/templates/welcome/locales/en-US-US', { subject: 'x', text: 'x' }, 400, 'params/locale'],
      ];
      for (const [path, body, status, errorPath] of cases) {
        const answer = await call('PUT', path, body);
        assert.equal(
          answer.status,
          status,
          `${path} ${JSON.stringify(body)}: ${JSON.stringify(answer.json)}`,
        );
        assert.equal(answer.json.code, 'VALIDATION_FAILED');
        assert.ok(
          answer.json.errors.some((e: { path: string }) => e.path.startsWith(errorPath)),
          JSON.stringify(answer.json.errors),
        );
      }
      const unknown = await call('PUT', '/templates/nothing/locales/fr', { subject: 'x', text: 'x' });
      assert.equal(unknown.status, 404);
      assert.equal((await call('DELETE', '/templates/nothing/locales/fr')).status, 404);
      const reader = await tokenFor(herald.deps, { tenant: 'acme', scopes: ['templates:read'] });
      assert.equal(
        (await call('PUT', '/templates/welcome/locales/de', { subject: 'x', text: 'x' }, reader)).status,
        403,
      );
      assert.equal((await call('DELETE', '/templates/welcome/locales/fr', undefined, reader)).status, 403);
      // A template with variants keeps its channel: they are written for it.
      const channel = await call('PUT', '/templates/welcome', { channel: 'sms', text: 'x' });
      assert.equal(channel.status, 400);
      assert.match(channel.json.errors[0].message, /locale variants \(fr\)/);
      assert.equal((await call('GET', '/templates/welcome')).json.version, 5, 'no version was saved');
    });

    it('renders the closest variant (fr-CA → fr) and records it on the SENT event', async () => {
      const { detail, subject, sentEvent } = await sent('claire@example.com', { locale: 'fr-ca' });
      assert.equal(detail.status, 'SENT');
      assert.equal(detail.locale, 'fr-CA', 'stored canonical');
      assert.equal(subject, 'Bonjour Ada');
      assert.equal(sentEvent?.locale, 'fr');
    });

    it('renders the template itself when no variant is close, and the SENT event has no locale', async () => {
      for (const [to, extra] of [
        ['dora@example.com', { locale: 'de-DE' }],
        ['nell@example.com', {}],
      ] as const) {
        const { detail, subject, sentEvent } = await sent(to, extra);
        assert.equal(subject, 'Hello Ada', to);
        assert.ok(sentEvent, to);
        assert.equal('locale' in sentEvent, false, to);
        assert.equal(detail.locale, 'locale' in extra ? 'de-DE' : null);
      }
    });

    it('renders the variants pinned at acceptance, whatever changes after', async () => {
      // Held in the queue while the template changes under it.
      assert.equal((await call('POST', '/admin/queues/pause', { channel: 'email' }, operator)).status, 200);
      const accepted = await call('POST', '/notifications', {
        channel: 'email',
        recipient: { email: 'pinned@example.com' },
        template: 'welcome',
        variables: { name: 'Ada' },
        locale: 'fr',
      });
      assert.equal(accepted.status, 201);
      const changed = await call('PUT', '/templates/welcome/locales/fr', {
        subject: 'Coucou {{ name }}',
        text: 'x',
      });
      assert.equal(changed.status, 200);
      assert.equal((await call('DELETE', '/templates/welcome/locales/fr')).status, 204);
      assert.equal((await call('POST', '/admin/queues/resume', { channel: 'email' }, operator)).status, 200);
      const { subject, sentEvent } = await settle(accepted.json.notificationId, 'pinned@example.com');
      assert.equal(subject, 'Bonjour Ada');
      assert.equal(sentEvent?.locale, 'fr');
      // Accepted now, against the version without fr: the template itself.
      assert.equal((await sent('later@example.com', { locale: 'fr' })).subject, 'Hello Ada');
    });

    it('refuses a bad locale tag with 400 and stores nothing; a batch item carries its own', async () => {
      const before = (await call('GET', '/notifications?limit=500')).json.items.length;
      for (const locale of ['not a tag', 'en-US-US', 'x'.repeat(65), 42]) {
        const answer = await call('POST', '/notifications', {
          channel: 'email',
          recipient: { email: 'bad@example.com' },
          template: 'welcome',
          locale,
        });
        assert.equal(answer.status, 400, String(locale));
        assert.equal(answer.json.errors[0].path, 'body/locale', JSON.stringify(answer.json));
      }
      assert.equal((await call('GET', '/notifications?limit=500')).json.items.length, before);
      const batch = await call('POST', '/notifications/batch', {
        notifications: [
          { channel: 'email', recipient: { email: 'b1@example.com' }, template: 'welcome', locale: 'FR' },
          {
            channel: 'email',
            recipient: { email: 'b2@example.com' },
            template: 'welcome',
            locale: 'en-US-US',
          },
        ],
      });
      assert.equal(batch.status, 207);
      const [ok, refused] = batch.json.results;
      assert.equal(refused.error.errors[0].path, 'body/notifications/1/locale');
      const stored = await call('GET', `/notifications/${ok.notificationId}`);
      assert.equal(stored.json.locale, 'fr');
      assert.equal((await call('GET', '/notifications?limit=500')).json.items.length, before + 1);
    });
  });
}
