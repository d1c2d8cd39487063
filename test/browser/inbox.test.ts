import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import type { Herald } from '../../src/main.ts';
import { apiCall } from '../helpers/api-call.ts';
import {
  browserSkip,
  launchBrowser,
  logIn,
  type PageWatch,
  settled,
  startStack,
  storedSession,
  watchPage,
} from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';

/**
 * `<herald-inbox>` (/inbox.js) on the web UI's Inbox page, under the gateway's CSP: the unread
 * count, a live arrival, mark all as read, archive, the keyboard; and the send page's `inapp`.
 * One Herald and one Chromium for the file.
 */
describe('<herald-inbox> and the inapp pages in Chromium', { skip: browserSkip() }, () => {
  let herald: (Herald & { gatewayUrl: string }) | undefined;
  let browser: Browser;
  let page: Page;
  let watch: PageWatch;
  let base: string;
  let admin: string;
  /** The admin's own test recipient, as the Inbox page names it. */
  let recipientId: string;
  /** A caller's own app on another origin, embedding the element under a strict CSP of its own. */
  let host: Server;
  let hostOrigin: string;

  before(async () => {
    host = createServer((_request, response) => {
      const gateway = base;
      response.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        // No inline script, no style at all, and only the gateway to load from and connect to.
        'content-security-policy': `default-src 'none'; script-src ${gateway}; connect-src ${gateway}; style-src 'none'`,
      });
      response.end(
        `<!doctype html><title>An app</title><script src="${gateway}/inbox.js"></script>` +
          `<herald-inbox api-url="${gateway}/api"></herald-inbox>`,
      );
    });
    host.listen(0, '127.0.0.1');
    await once(host, 'listening');
    hostOrigin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    herald = await startStack({ HERALD_INBOX_ORIGINS: hostOrigin });
    base = herald.gatewayUrl;
    browser = await launchBrowser();
    page = await browser.newPage();
    watch = await watchPage(page);
    await logIn(page, base);
    admin = (await storedSession(page))?.accessToken ?? '';
    const me = await apiCall(base, admin, 'GET', '/api/auth/me');
    recipientId = `herald-ui.${(me.json as { sub: string }).sub}`;
  });
  after(async () => {
    await browser?.close();
    await herald?.close();
    host?.close();
  });

  /** Sends an inapp message to the admin's test recipient through the API; its notification ID. */
  async function sendInapp(title: string, extra: Record<string, unknown> = {}): Promise<string> {
    const response = await apiCall(base, admin, 'POST', '/api/notifications', {
      channel: 'inapp',
      recipient: { id: recipientId },
      content: { title, body: `The body of ${title}`, ...extra },
    });
    assert.equal(response.status, 201, JSON.stringify(response.json));
    return (response.json as { notificationId: string }).notificationId;
  }

  /** A recipient token for the test recipient, as the page's tokenProvider gets one. */
  async function recipientToken(): Promise<string> {
    const answer = await apiCall(base, admin, 'POST', `/api/recipients/${recipientId}/token`);
    assert.equal(answer.status, 200, JSON.stringify(answer.json));
    return (answer.json as { access_token: string }).access_token;
  }

  const inbox = () => page.locator('herald-inbox');
  /** The bell: its accessible name carries the unread count. */
  const bell = () => inbox().getByRole('button', { name: /^Notifications/ });
  const item = (title: string): Locator => inbox().getByRole('article').filter({ hasText: title });

  it('shows the unread count of messages sent before the page loaded', async () => {
    // The page makes the recipient when it is missing; here it exists first, with two messages.
    await apiCall(base, admin, 'PUT', `/api/recipients/${recipientId}`, { name: 'Admin' });
    const first = await sendInapp('First message', { url: 'https://example.com/orders/1' });
    await sendInapp('Second message');
    await settled(base, admin, first, 'DELIVERED');
    await page.getByRole('link', { name: 'Inbox', exact: true }).click();
    await page.waitForURL(`${base}/inbox`);
    await eventually(async () => (await bell().getAttribute('aria-label')) === 'Notifications, 2 unread');
    assert.equal(await inbox().locator('[part="badge"]').textContent(), '2');
    assert.equal(await bell().getAttribute('aria-expanded'), 'false');
    // The element's shadow root is open, and it runs under the gateway's own CSP.
    assert.equal(await inbox().evaluate((el) => el.shadowRoot?.mode), 'open');
    assert.match(
      (await page.evaluate(() => document.querySelector('script[src="/inbox.js"]')?.outerHTML)) ?? '',
      /inbox\.js/,
    );
  });

  it('opens the panel from the keyboard, lists the messages and closes on Escape', async () => {
    await bell().focus();
    await page.keyboard.press('Enter');
    assert.equal(await bell().getAttribute('aria-expanded'), 'true');
    const panel = inbox().getByRole('dialog', { name: 'Notifications' });
    await panel.waitFor();
    await item('Second message').waitFor();
    const titles = await inbox().getByRole('article').locator('.title').allTextContents();
    assert.deepEqual(
      titles.map((t) => t.replace('Unread: ', '')),
      ['Second message', 'First message'],
    );
    // A link only where the message has an http(s) URL; the relative time is written out.
    assert.equal(
      await item('First message').getByRole('link').getAttribute('href'),
      'https://example.com/orders/1',
    );
    assert.equal(await item('Second message').getByRole('link').count(), 0);
    assert.equal(await item('First message').locator('time').textContent(), 'now');
    // Opening the panel marks what it shows as seen (still unread).
    const token = await recipientToken();
    await eventually(
      async () => (await apiCall(base, token, 'GET', '/api/inbox/counts')).json?.unseen === 0,
      10_000,
      'seen-all',
    );
    assert.equal((await apiCall(base, token, 'GET', '/api/inbox/counts')).json?.unread, 2);
    await page.keyboard.press('Escape');
    assert.equal(await panel.isHidden(), true);
    assert.equal(
      await bell().evaluate(
        (el) =>
          el.getRootNode() instanceof ShadowRoot && (el.getRootNode() as ShadowRoot).activeElement === el,
      ),
      true,
    );
  });

  it('gets a message sent after the page loaded, live, without a reload', async () => {
    const loads = watch.urls.filter((u) => new URL(u).pathname === '/inbox').length;
    // Sent with the page's own button.
    await page.getByLabel('Title').fill('Live message');
    await page.getByRole('button', { name: 'Send a test message' }).click();
    await eventually(
      async () => (await bell().getAttribute('aria-label')) === 'Notifications, 3 unread',
      20_000,
      'the live count',
    );
    await bell().click();
    await item('Live message').waitFor();
    assert.equal(watch.urls.filter((u) => new URL(u).pathname === '/inbox').length, loads, 'no reload');
  });

  it('marks one message read, then all, and archives one', async () => {
    await item('First message').getByRole('button', { name: 'Mark as read: First message' }).click();
    await eventually(async () => (await bell().getAttribute('aria-label')) === 'Notifications, 2 unread');
    await inbox().getByRole('button', { name: 'Mark all as read' }).click();
    await eventually(async () => (await bell().getAttribute('aria-label')) === 'Notifications');
    assert.equal(await inbox().locator('[part="badge"]').isHidden(), true);
    assert.equal(await inbox().getByRole('button', { name: 'Mark all as read' }).isDisabled(), true);
    assert.equal(await inbox().locator('article.unread').count(), 0);
    await item('Second message').getByRole('button', { name: 'Archive: Second message' }).click();
    await item('Second message').waitFor({ state: 'detached' });
    const archived = await apiCall(base, await recipientToken(), 'GET', '/api/inbox?filter=archived');
    assert.deepEqual(
      (archived.json as { items: { title: string }[] }).items.map((i) => i.title),
      ['Second message'],
    );
  });

  it('asks its tokenProvider for a new token when the API refuses the one it has', async () => {
    const token = await recipientToken();
    const calls = await page.evaluate(async (good) => {
      const element = document.createElement('herald-inbox') as HTMLElement & {
        token: string;
        tokenProvider: () => Promise<string>;
        counts: { unread: number };
      };
      let asked = 0;
      element.setAttribute('api-url', '/api');
      element.tokenProvider = async () => {
        asked += 1;
        return good;
      };
      element.token = 'a.tampered.token';
      document.body.append(element);
      // Listed once the refused token was replaced (the recipient's read messages are there).
      while (!element.shadowRoot?.querySelector('article')) await new Promise((r) => setTimeout(r, 20));
      element.remove();
      return asked;
    }, token);
    assert.ok(calls >= 1);
  });

  it("runs in a page of another origin under that page's own strict CSP", async () => {
    const other = await browser.newPage();
    const otherWatch = await watchPage(other);
    try {
      await other.goto(hostOrigin);
      const element = other.locator('herald-inbox');
      await element.evaluate((el) => customElements.whenDefined(el.localName));
      const sent = await sendInapp('For another origin');
      await settled(base, admin, sent, 'DELIVERED');
      const token = await recipientToken();
      await element.evaluate((el, t) => {
        (el as HTMLElement & { token: string }).token = t;
      }, token);
      const bell = element.getByRole('button', { name: /^Notifications/ });
      await eventually(async () => (await bell.getAttribute('aria-label')) === 'Notifications, 1 unread');
      await bell.click();
      await element.getByRole('article').filter({ hasText: 'For another origin' }).waitFor();
      // Styled although the page allows no style at all: the sheet is adopted, not inline.
      const badge = await element
        .locator('[part="bell"]')
        .evaluate((el) => getComputedStyle(el).borderRadius);
      assert.equal(badge, '50%');
      assert.deepEqual(otherWatch.cspViolations, []);
      assert.deepEqual(otherWatch.errors, []);
    } finally {
      await other.close();
    }
  });

  it('sends an inapp from the send page, and the detail shows its read events', async () => {
    await page.getByRole('link', { name: 'Send', exact: true }).click();
    await page.getByLabel('Channel').selectOption('inapp');
    await page.getByLabel('Recipient ID').fill(recipientId);
    await page.getByLabel('Title').fill('From the send page');
    await page.getByLabel('Body').fill('Hello {{ name }}');
    await page.getByLabel('Variables (JSON)').fill('{"name": "Ada"}');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.waitForURL(/\/notifications\/[^/]+$/);
    await page.getByTestId('status').filter({ hasText: 'DELIVERED' }).waitFor({ timeout: 20_000 });
    assert.match((await page.locator('.timeline').textContent()) ?? '', /DELIVERED.*via inbox/);
    const id = new URL(page.url()).pathname.split('/').pop() as string;
    const token = await recipientToken();
    const read = await apiCall(base, token, 'POST', `/api/inbox/${id}/read`);
    assert.equal(read.status, 200);
    assert.equal((read.json as { body: string }).body, 'Hello Ada');
    // The page keeps following a delivered inapp message: its reading shows without a reload.
    await page.locator('.timeline .event-read').waitFor();
    assert.match((await page.locator('.timeline').textContent()) ?? '', /DELIVERED[\s\S]*SEEN[\s\S]*READ/);
  });

  it('ran without a console error or a CSP violation', () => {
    assert.deepEqual(watch.cspViolations, []);
    // The refused tampered token is logged by Chromium as a failed request: the only error allowed.
    assert.deepEqual(
      watch.errors.filter((e) => !/401/.test(e)),
      [],
    );
  });
});
