// One-click unsubscribe (API.md §11, RFC 8058) end to end: a real Herald delivering to a real SMTP
// server, the headers as the mail client sees them, the link posted as a mail client posts it,
// and the suppression API that shows and removes the result.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Herald, startHerald } from '../../src/main.ts';
import { apiCall } from '../helpers/api-call.ts';
import { tokenFor } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { type SmtpPeer, startSmtpPeer } from '../helpers/peers/smtp.ts';

const PUBLIC_URL = 'https://herald.example.com';

describe('one-click unsubscribe', () => {
  let herald: Herald;
  let peer: SmtpPeer;
  let admin: string;
  before(async () => {
    peer = await startSmtpPeer();
    herald = await startHerald(
      testConfig({
        HERALD_ROLES: 'auth,api,worker',
        HERALD_PUBLIC_URL: PUBLIC_URL,
        SMTP_URL: peer.url(),
        EMAIL_FROM: 'News <news@mail.example.com>',
      }),
    );
    admin = await tokenFor(herald.deps, { role: 'admin', tenant: 'acme' });
  });
  after(async () => {
    await herald.close();
    await peer.close();
  });

  const call = (method: string, path: string, body?: object, token = admin) =>
    apiCall(herald.apiUrl as string, token, method, path, body);

  /** Sends an email and waits for its final status; returns it and its events. */
  async function send(to: string, priority: string) {
    const accepted = await call('POST', '/notifications', {
      channel: 'email',
      priority,
      recipient: { email: to },
      content: { subject: 'News', text: 'This week' },
    });
    assert.equal(accepted.status, 201);
    const id = accepted.json.notificationId as string;
    let detail: { status: string; events: Array<{ type: string; detail?: string }> } | undefined;
    await eventually(
      async () => {
        detail = (await call('GET', `/notifications/${id}`)).json;
        return detail?.status === 'SENT' || detail?.status === 'FAILED';
      },
      20_000,
      `notification ${id} done`,
    );
    return detail as NonNullable<typeof detail>;
  }

  /** The unsubscribe link the mail to `to` carried, as a path on the API. */
  const linkIn = (to: string) => {
    const mail = peer.received.findLast((m) => m.to.includes(to));
    assert.ok(mail, `mail to ${to}`);
    const header = mail.headers.get('list-unsubscribe') ?? '';
    const match = /^<(https:\/\/herald\.example\.com(\/unsubscribe\/[A-Za-z0-9_-]+))>$/.exec(header);
    assert.ok(match, `List-Unsubscribe: ${header}`);
    assert.equal(mail.headers.get('list-unsubscribe-post'), 'List-Unsubscribe=One-Click');
    return match[2] as string;
  };
  /** A one-click POST: form-encoded as mail clients send it, or multipart (FormData). */
  const oneClick = (path: string, body: string | FormData = 'List-Unsubscribe=One-Click') =>
    fetch(`${herald.apiUrl}${path}`, {
      method: 'POST',
      headers: typeof body === 'string' ? { 'content-type': 'application/x-www-form-urlencoded' } : {},
      body,
    });
  const multipart = (value: string) => {
    const form = new FormData();
    form.set('List-Unsubscribe', value);
    return form;
  };
  const suppressed = async () => (await call('GET', '/suppressions?channel=email')).json.items;

  it('puts both headers on LOW email only, and the one-click POST suppresses LOW for that address', async () => {
    await send('reader@example.com', 'LOW');
    const path = linkIn('reader@example.com');
    await send('reader@example.com', 'NORMAL');
    const normal = peer.received.findLast((m) => m.to.includes('reader@example.com'));
    assert.equal(normal?.headers.get('list-unsubscribe'), undefined, 'no link on NORMAL email');

    // GET is a page with a button: it changes nothing (mail scanners follow links).
    const page = await fetch(`${herald.apiUrl}${path}`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    const html = await page.text();
    assert.match(html, /r\*\*\*@example\.com/);
    assert.doesNotMatch(html, /reader@example\.com/);
    assert.match(html, /<form method="post">/);
    assert.deepEqual(await suppressed(), []);

    // A changed token is a 404, and changes nothing either.
    const token = path.slice('/unsubscribe/'.length);
    const flipped = `${token.slice(0, 20)}${token[20] === 'A' ? 'B' : 'A'}${token.slice(21)}`;
    assert.equal((await oneClick(`/unsubscribe/${flipped}`)).status, 404);
    assert.equal((await fetch(`${herald.apiUrl}/unsubscribe/${flipped}`)).status, 404);
    assert.equal((await oneClick(path, 'List-Unsubscribe=Something')).status, 400);
    assert.equal((await oneClick(path, multipart('Something'))).status, 400);
    assert.deepEqual(await suppressed(), []);

    assert.equal((await oneClick(path)).status, 200);
    assert.equal((await oneClick(path)).status, 200, 'again: 200, nothing new');
    const items = await suppressed();
    assert.deepEqual(
      items.map((s: { recipient: string; reason: string }) => [s.recipient, s.reason]),
      [['r***@example.com', 'unsubscribe']],
    );

    // LOW stops with no provider call; NORMAL still goes.
    const before = peer.rcpt.length;
    const low = await send('reader@example.com', 'LOW');
    assert.equal(low.status, 'FAILED');
    assert.match(low.events.at(-1)?.detail ?? '', /recipient suppressed \(unsubscribe since /);
    assert.equal(peer.rcpt.length, before);
    assert.equal((await send('reader@example.com', 'NORMAL')).status, 'SENT');
    assert.equal(peer.rcpt.length, before + 1);
  });

  it('keeps links made before a key rotation working, and makes new ones with the new key', async () => {
    await send('keeper@example.com', 'LOW');
    const old = linkIn('keeper@example.com');
    const { kid } = await herald.deps.unsubscribe.rotate();
    assert.ok(kid >= 2);
    const fresh = await herald.deps.unsubscribe.make({
      tenant: 'acme',
      channel: 'email',
      recipient: 'x@example.com',
    });
    assert.equal(Buffer.from(fresh, 'base64url').readUInt16BE(0), kid);
    assert.equal((await oneClick(old, multipart('One-Click'))).status, 200, 'multipart, as RFC 8058 allows');
    const items = await suppressed();
    assert.ok(items.some((s: { recipient: string }) => s.recipient === 'k***@example.com'));
  });

  it('makes links that work for long addresses too (tokens well over 100 characters)', async () => {
    const to = 'firstname.middle-name.lastname@departments.long-subdomain.example.com';
    await send(to, 'LOW');
    const path = linkIn(to);
    const token = path.slice('/unsubscribe/'.length);
    assert.ok(token.length > 150, `a ${token.length}-character token`);
    assert.equal((await fetch(`${herald.apiUrl}${path}`)).status, 200);
    assert.equal((await oneClick(path)).status, 200);
    assert.ok(
      (await suppressed()).some(
        (s: { recipient: string }) => s.recipient === 'f***@departments.long-subdomain.example.com',
      ),
    );
  });

  it("opens a token only in its own spelling: one with the last character's spare bits changed is 404", async () => {
    // A recipient whose token length leaves spare bits in the last character (not a multiple of 4).
    let target = { tenant: 'acme', channel: 'email' as const, recipient: '' };
    let token = '';
    for (let n = 1; token.length % 4 === 0; n++) {
      target = { ...target, recipient: `${'s'.repeat(n)}@example.com` };
      token = await herald.deps.unsubscribe.make(target);
    }
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(token.at(-1) as string);
    const spare = token.length % 4 === 2 ? 0b1111 : 0b11; // bits of the last character decoding drops
    const sibling = `${token.slice(0, -1)}${alphabet[last ^ spare]}`;
    assert.notEqual(sibling, token);
    assert.deepEqual(Buffer.from(sibling, 'base64url'), Buffer.from(token, 'base64url'), 'same bytes');
    assert.deepEqual(await herald.deps.unsubscribe.open(token), target);
    assert.equal(await herald.deps.unsubscribe.open(sibling), undefined);
    assert.equal((await oneClick(`/unsubscribe/${sibling}`)).status, 404);
  });

  it('lists, checks, adds and removes suppressions by API; removal sends again; tenants stay apart', async () => {
    const other = await tokenFor(herald.deps, { role: 'admin', tenant: 'other' });
    const viewer = await tokenFor(herald.deps, { role: 'viewer', tenant: 'acme' });
    const added = await call('POST', '/suppressions', { channel: 'email', recipient: 'Blocked@Example.com' });
    assert.equal(added.status, 201);
    assert.deepEqual(added.json.reason, 'manual');
    assert.equal((await call('POST', '/suppressions', { channel: 'email', recipient: 'x' })).status, 400);
    assert.equal(
      (await call('POST', '/suppressions', { channel: 'email', recipient: 'a@example.com' }, viewer)).status,
      403,
    );
    const check = await call(
      'GET',
      '/suppressions?channel=email&recipient=blocked%40example.com',
      undefined,
      viewer,
    );
    assert.equal(check.status, 200);
    assert.equal(check.json.items.length, 1);
    assert.equal((await call('GET', '/suppressions', undefined, other)).json.items.length, 0);
    assert.equal(
      (await call('DELETE', '/suppressions/email/blocked%40example.com', undefined, other)).status,
      404,
    );
    assert.equal((await send('blocked@example.com', 'NORMAL')).status, 'FAILED');
    assert.equal((await call('DELETE', '/suppressions/email/Blocked%40example.com')).status, 204);
    // A push endpoint is a URL itself: URL-encoded in the path, it is removed like any other.
    const endpoint = 'https://push.example.com/send/abc?x=1';
    assert.equal((await call('POST', '/suppressions', { channel: 'push', recipient: endpoint })).status, 201);
    assert.equal((await call('DELETE', `/suppressions/push/${encodeURIComponent(endpoint)}`)).status, 204);
    assert.equal((await send('blocked@example.com', 'NORMAL')).status, 'SENT');
  });

  it("keeps an admin's reason in their own words, up to 200 characters, and names it when it stops a send", async () => {
    const added = await call('POST', '/suppressions', {
      channel: 'email',
      recipient: 'phoned@example.com',
      reason: '  asked by phone, ticket 4411 ',
    });
    assert.equal(added.status, 201, JSON.stringify(added.json));
    assert.equal(added.json.reason, 'asked by phone, ticket 4411', 'stored without surrounding spaces');
    const listed = await call('GET', '/suppressions?channel=email&recipient=phoned%40example.com');
    assert.equal(listed.json.items[0]?.reason, 'asked by phone, ticket 4411');
    const stopped = await send('phoned@example.com', 'NORMAL');
    assert.equal(stopped.status, 'FAILED');
    assert.match(
      stopped.events.at(-1)?.detail ?? '',
      /^recipient suppressed \("asked by phone, ticket 4411" since /,
    );
    // 200 characters (not bytes, not UTF-16 units) is the limit.
    const long = await call('POST', '/suppressions', {
      channel: 'sms',
      recipient: '+15550109999',
      reason: '\u{1F4DE}'.repeat(200),
    });
    assert.equal(long.status, 201, JSON.stringify(long.json));
    assert.equal([...long.json.reason].length, 200);
    for (const reason of ['x'.repeat(201), '', '   ', 'two\nlines', 'a\u0000b', 'tab\there']) {
      const refused = await call('POST', '/suppressions', {
        channel: 'email',
        recipient: 'refused@example.com',
        reason,
      });
      assert.equal(refused.status, 400, JSON.stringify(reason));
      assert.equal(refused.json.code, 'VALIDATION_FAILED');
      assert.equal(refused.json.errors[0]?.path, 'body/reason');
    }
    const left = await call('GET', '/suppressions?channel=email&recipient=refused%40example.com');
    assert.deepEqual(left.json.items, [], 'a refused reason added nothing');
  });
});
