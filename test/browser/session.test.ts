import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Herald } from '../../src/main.ts';
import {
  browserSkip,
  launchBrowser,
  logIn,
  type PageWatch,
  startStack,
  storedSession,
  watchPage,
} from '../helpers/browser.ts';

describe('web UI session in Chromium (HERALD_ACCESS_TTL=5)', { skip: browserSkip() }, () => {
  let herald: (Herald & { gatewayUrl: string }) | undefined;
  let browser: Browser;
  let base: string;

  before(async () => {
    herald = await startStack({ HERALD_ACCESS_TTL: '5' });
    base = herald.gatewayUrl;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await herald?.close();
  });

  async function signedInPage(): Promise<{ page: Page; watch: PageWatch }> {
    const page = await (browser as Browser).newPage();
    const watch = await watchPage(page);
    await logIn(page, base);
    return { page, watch };
  }

  const refreshCalls = (watch: PageWatch) =>
    watch.urls.filter((u) => u.endsWith('/api/session/refresh')).length;

  it('refreshes the access token by itself at about 80% of its lifetime', async () => {
    const { page, watch } = await signedInPage();
    const first = await storedSession(page);
    // 5 s tokens are replaced after about 4 s, again and again, with nobody touching the page.
    await page.waitForFunction(
      (token) => JSON.parse(localStorage.getItem('herald.session') ?? '{}').accessToken !== token,
      first?.accessToken,
      { timeout: 8000 },
    );
    const second = await storedSession(page);
    await page.waitForFunction(
      (token) => JSON.parse(localStorage.getItem('herald.session') ?? '{}').accessToken !== token,
      second?.accessToken,
      { timeout: 8000 },
    );
    assert.ok(refreshCalls(watch) >= 2);
    // Still signed in, and the API accepts the current token.
    await page.getByRole('link', { name: 'Notifications' }).click();
    await page.getByRole('heading', { name: 'Notifications' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/notifications');
    const tokens = [first?.accessToken, second?.accessToken, (await storedSession(page))?.accessToken];
    for (const token of tokens)
      assert.ok(
        watch.urls.every((u) => !u.includes(token as string)),
        'no token in a URL',
      );
    assert.deepEqual(watch.cspViolations, []);
    await page.close();
  });

  it('refreshes once and retries when the API answers 401', async () => {
    const { page, watch } = await signedInPage();
    // An access token the API refuses, though the browser believes it is fresh.
    await page.evaluate(() => {
      const session = JSON.parse(localStorage.getItem('herald.session') ?? '{}');
      session.accessToken = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
      session.issuedAt = Date.now();
      session.expiresAt = Date.now() + 600_000;
      localStorage.setItem('herald.session', JSON.stringify(session));
    });
    const before = refreshCalls(watch);
    await page.getByRole('link', { name: 'Admin' }).click();
    await page.getByRole('cell', { name: 'admin@example.com' }).waitFor();
    assert.ok(refreshCalls(watch) > before);
    assert.notEqual((await storedSession(page))?.accessToken.endsWith('c2lnbmF0dXJl'), true);
    await page.close();
  });

  it('sends every page to login once storage is cleared', async () => {
    const { page } = await signedInPage();
    await page.evaluate(() => localStorage.clear());
    for (const path of [
      '/',
      '/notifications',
      '/send',
      '/templates',
      '/sandbox',
      '/admin',
      '/notifications/x',
    ]) {
      await page.goto(`${base}${path}`);
      await page.waitForURL(`${base}/login`);
    }
    // In a page already open: the next call finds no session and goes to login too.
    await logIn(page, base);
    await page.evaluate(() => localStorage.clear());
    await page.getByRole('link', { name: 'Notifications' }).click();
    await page.waitForURL(`${base}/login`);
    await page.close();
  });

  it('logs out: storage is cleared and the pages are guarded again', async () => {
    const { page } = await signedInPage();
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(`${base}/login`);
    assert.equal(await storedSession(page), null);
    assert.equal(await page.evaluate(() => localStorage.length + sessionStorage.length), 0);
    await page.goto(`${base}/admin`);
    await page.waitForURL(`${base}/login`);
    await page.close();
  });
});
