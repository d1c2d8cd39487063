// The hosted preferences page (docs/preferences.md, `preferencesUrl`) over real HTTP, on SQLite and
// PostgreSQL: boxes checked by the sending rule, a browser-style form post saving them, a forged
// token 404, bad fields 400, tenant text escaped, and the per-address throttle.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { PUBLIC_PAGE_CSP } from '../../src/http/html-page.ts';
import { loggerOptions } from '../../src/http/logger.ts';
import { type Herald, startHerald } from '../../src/main.ts';
import { testConfig } from '../helpers/config.ts';
import { type PostgresServer, sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';

/** Each box of a page: its name, and whether it is checked and disabled. */
export function boxesOf(html: string): Map<string, { checked: boolean; disabled: boolean }> {
  const boxes = new Map<string, { checked: boolean; disabled: boolean }>();
  for (const [tag] of html.matchAll(/<input type="checkbox"[^>]*>/g)) {
    const name = /name="([^"]+)"/.exec(tag)?.[1] as string;
    boxes.set(name, { checked: / checked/.test(tag), disabled: / disabled/.test(tag) });
  }
  return boxes;
}

const MAX_POSTS = 4;

describe('the preferences link in logs', () => {
  it('is redacted from the logged URL, on the API and under the gateway', () => {
    const { req } = loggerOptions('info').serializers;
    const url = (path: string) =>
      req({ id: '1', method: 'GET', url: path, ip: '127.0.0.1' } as unknown as FastifyRequest).url;
    assert.equal(url('/preferences/WyJhIiwiYiJd.mac?x=1'), '/preferences/[redacted]');
    assert.equal(url('/api/preferences/WyJhIiwiYiJd.mac'), '/api/preferences/[redacted]');
    assert.equal(url('/api/unsubscribe/AAEKtoken'), '/api/unsubscribe/[redacted]');
    assert.equal(url('/recipients/user-1/preferences'), '/recipients/user-1/preferences');
  });
});

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`the hosted preferences page (${kind})`, () => {
    let server: PostgresServer | undefined;
    let herald: Herald;
    let token: string;
    let base: string;
    before(async () => {
      if (kind === 'postgres') server = await sharedPostgres();
      herald = await startHerald(
        testConfig({
          HERALD_ROLES: 'auth,api',
          HERALD_PREFERENCES_MAX_POSTS: String(MAX_POSTS),
          ...(server ? { DATABASE_URL: await server.createDatabase('herald_page') } : {}),
        }),
      );
      base = herald.apiUrl as string;
      const { store } = herald.deps;
      const fields = { description: null, required: false, defaultChannels: {} };
      await store.categories.put(
        'acme',
        'marketing',
        { ...fields, description: '<script>alert(1)</script> & offers', defaultChannels: { sms: false } },
        1,
      );
      await store.categories.put('acme', 'security', { ...fields, required: true }, 1);
      await store.categories.put('acme', 'digest', fields, 1);
      await store.recipients.put('acme', [{ id: 'user-1842', profile: { email: 'ada@example.com' } }], 1);
      await store.recipients.setPreferences(
        'acme',
        'user-1842',
        { channels: { push: false }, categories: { digest: { email: false } } },
        1,
      );
      token = await herald.deps.preferenceTokens.make({ tenant: 'acme', id: 'user-1842' });
    });
    after(async () => {
      await herald?.close();
      if (server) await stopSharedPostgres();
    });

    /** A request from client address `from` (the API believes X-Forwarded-For from loopback). */
    const open = (from: string, path = `/preferences/${token}`) =>
      fetch(`${base}${path}`, { headers: { 'x-forwarded-for': from } });
    const post = (
      body: string,
      from: string,
      path = `/preferences/${token}`,
      type = 'application/x-www-form-urlencoded',
    ) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': type, 'x-forwarded-for': from },
        body,
      });
    const stored = async () => (await herald.deps.store.recipients.get('acme', 'user-1842'))?.preferences;
    const checked = (html: string) => [...boxesOf(html)].filter(([, b]) => b.checked).map(([name]) => name);

    it('shows every category with a box per channel, checked when it would be sent, under a strict CSP', async () => {
      const page = await open('192.0.2.1');
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
      assert.equal(page.headers.get('content-security-policy'), PUBLIC_PAGE_CSP);
      assert.equal(page.headers.get('cache-control'), 'no-store');
      assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
      const html = await page.text();
      const boxes = boxesOf(html);
      assert.deepEqual(
        [...boxes.keys()],
        ['digest', 'marketing', 'security', 'channels'].flatMap((k) =>
          ['email', 'sms', 'push', 'inapp'].map((c) => `${k}.${c}`),
        ),
      );
      assert.deepEqual(checked(html), [
        // digest: its own email choice is false; push is off for the channel as a whole.
        'digest.sms',
        'digest.inapp',
        // marketing: sms is off by default; push off for the channel.
        'marketing.email',
        'marketing.inapp',
        // required: always sent, whatever the choices.
        'security.email',
        'security.sms',
        'security.push',
        'security.inapp',
        'channels.email',
        'channels.sms',
        'channels.inapp',
      ]);
      assert.ok([...boxes].every(([name, b]) => b.disabled === name.startsWith('security.')));
      assert.match(html, /&#60;script&#62;alert\(1\)&#60;\/script&#62; &#38; offers/);
      assert.doesNotMatch(html, /<script/);
      assert.match(html, /<form method="post">/);
      assert.doesNotMatch(html, /saved/);
    });

    it('saves a browser-style form post: checked boxes true, unchecked false, required ones untouched', async () => {
      const answer = await post(
        'marketing.email=on&marketing.sms=on&channels.email=on&channels.inapp=on',
        '192.0.2.2',
      );
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('content-security-policy'), PUBLIC_PAGE_CSP);
      const html = await answer.text();
      assert.match(html, /<p class="notice" role="status">Your choices are saved\.<\/p>/);
      const none = { email: false, sms: false, push: false, inapp: false };
      assert.deepEqual(await stored(), {
        channels: { email: true, sms: false, push: false, inapp: true },
        categories: { digest: none, marketing: { ...none, email: true, sms: true } },
      });
      assert.deepEqual(
        checked(html).filter((n) => !n.startsWith('security.')),
        ['marketing.email', 'marketing.sms', 'channels.email', 'channels.inapp'],
      );
      // With the page's hidden `shown` fields, only the categories it showed are set.
      await post('shown=digest&digest.push=on', '192.0.2.2');
      const after = await stored();
      assert.deepEqual(after?.categories.digest, { ...none, push: true });
      assert.deepEqual(after?.categories.marketing, { ...none, email: true, sms: true });
    });

    it('answers 404 for a forged or altered token, and 400 for a field the page has not, changing nothing', async () => {
      const before = await stored();
      const flipped = `${token.slice(0, 10)}${token[10] === 'A' ? 'B' : 'A'}${token.slice(11)}`;
      const forged = await herald.deps.preferenceTokens.make({ tenant: 'acme', id: 'user-1843' });
      for (const path of [`/preferences/${flipped}`, `/preferences/${forged}`, '/preferences/x.y']) {
        const got = await open('192.0.2.3', path);
        assert.equal(got.status, 404, path);
        assert.match(got.headers.get('content-type') ?? '', /^application\/problem\+json/);
        assert.equal((await post('channels.email=on', '192.0.2.4', path)).status, 404);
      }
      for (const body of ['evil=1', 'marketing.fax=on', 'Bad Name.email=on', 'shown=no%20such']) {
        const refused = await post(body, '192.0.2.5');
        assert.equal(refused.status, 400, body);
        assert.equal((await refused.json()).code, 'VALIDATION_FAILED');
      }
      assert.equal((await post('{"channels":{}}', '192.0.2.6', undefined, 'application/json')).status, 415);
      assert.deepEqual(await stored(), before);
    });

    it(`throttles posts per client address: the ${MAX_POSTS + 1}th in the window is 429`, async () => {
      for (let i = 0; i < MAX_POSTS; i++) assert.equal((await post('', '198.51.100.7')).status, 200);
      const refused = await post('channels.email=on', '198.51.100.7');
      assert.equal(refused.status, 429);
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      assert.equal((await refused.json()).code, 'RATE_LIMITED');
      assert.equal((await stored())?.channels.email, false, 'the refused post changed nothing');
      // Another address is not held back, and opening the page is not counted.
      assert.equal((await post('channels.email=on', '198.51.100.8')).status, 200);
      assert.equal((await open('198.51.100.7')).status, 200);
      // Links that do not open count too (guessing tokens is held back like posting).
      for (let i = 0; i < MAX_POSTS; i++)
        assert.equal((await open('198.51.100.9', '/preferences/x.y')).status, 404);
      assert.equal((await open('198.51.100.9', '/preferences/x.y')).status, 429);
    });
  });
}
