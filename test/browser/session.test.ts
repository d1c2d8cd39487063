import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Herald } from '../../src/main.ts';
import { createUser } from '../helpers/auth.ts';
import {
  browserSkip,
  launchBrowser,
  logIn,
  type PageWatch,
  refreshStatus,
  startStack,
  storedSession,
  watchPage,
} from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';

const LEE = { email: 'lee@example.com', password: 'lee has a long password' };
const TWIN = { email: 'twin@example.com', password: 'one password for two tenants' };

describe('web UI session in Chromium (HERALD_ACCESS_TTL=5)', { skip: browserSkip() }, () => {
  let herald: (Herald & { gatewayUrl: string }) | undefined;
  let browser: Browser;
  let base: string;

  before(async () => {
    herald = await startStack({ HERALD_ACCESS_TTL: '5', HERALD_STREAM_HEARTBEAT_MS: '1000' });
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

  it("reconnects the live stream at once when it ends for its token's expiry: the page stays live", async () => {
    const { page, watch } = await signedInPage();
    const session = await storedSession(page);
    // A notification that does not change while the test runs: nothing but the stream's end
    // can make the page fetch it again.
    const sent = await fetch(`${base}/api/notifications`, {
      method: 'POST',
      headers: { authorization: `Bearer ${session?.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        channel: 'email',
        recipient: { email: 'later@example.com' },
        content: { subject: 'Later', text: 'In an hour' },
        scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
      }),
    });
    const { notificationId } = (await sent.json()) as { notificationId: string };
    await page.goto(`${base}/notifications/${notificationId}`);
    await page.getByText('(live)').waitFor();
    const count = (path: string) => watch.urls.filter((u) => new URL(u).pathname === path).length;
    const streams = () => count('/api/notifications/stream');
    const fetches = () => count(`/api/notifications/${notificationId}`);
    const [streamsBefore, fetchesBefore] = [streams(), fetches()];
    // The stream's token expires 5 s after it was issued; Herald ends the stream at the first
    // heartbeat (1 s) after the 30 s clock tolerance, saying why.
    await eventually(() => streams() > streamsBefore, 45_000, 'a new stream once the token ended');
    await page.getByText('(live)').waitFor();
    // A page that went to polling (live false) would have fetched the notification at once.
    assert.equal(fetches(), fetchesBefore, 'the page never left live');
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

  it('logs out of this device: storage is cleared, the page says other devices stay signed in', async () => {
    const { page } = await signedInPage();
    const session = await storedSession(page);
    await page.getByRole('button', { name: 'Log out' }).click();
    // The choice says what each way ends before anything happens.
    await page
      .getByRole('region', { name: 'Sign out' })
      .getByText('other devices where you signed in stay')
      .waitFor();
    await page.getByRole('button', { name: 'Sign out of this device' }).click();
    await page.waitForURL(`${base}/login?signed-out=device`);
    assert.match(
      (await page.getByRole('status').textContent()) ?? '',
      /Signed out on this device\. Other devices where you signed in stay signed in/,
    );
    assert.equal(await storedSession(page), null);
    assert.equal(await page.evaluate(() => localStorage.length + sessionStorage.length), 0);
    // Stateless tokens (README, "Security"): a copy of the refresh token still works.
    assert.equal(await refreshStatus(base, session?.refreshToken as string), 200);
    await page.goto(`${base}/admin`);
    await page.waitForURL(`${base}/login`);
    await page.close();
  });

  it('signs out everywhere from the header: every refresh token of the user gets 401', async () => {
    await createUser((herald as Herald).deps, { ...LEE, role: 'viewer' });
    const other = await (browser as Browser).newPage();
    await logIn(other, base, LEE);
    const otherSession = await storedSession(other);
    const page = await (browser as Browser).newPage();
    await logIn(page, base, LEE);
    const session = await storedSession(page);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await page.waitForURL(`${base}/login?signed-out=everywhere`);
    assert.equal(await storedSession(page), null);
    assert.equal(await refreshStatus(base, session?.refreshToken as string), 401);
    assert.equal(await refreshStatus(base, otherSession?.refreshToken as string), 401);
    await page.close();
    await other.close();
  });

  it('asks for the tenant when the email and password sign in to several tenants', async () => {
    const deps = (herald as Herald).deps;
    await createUser(deps, { ...TWIN, role: 'viewer', tenant: 'acme' });
    await createUser(deps, { ...TWIN, role: 'sender', tenant: 'globex' });
    const page = await (browser as Browser).newPage();
    const watch = await watchPage(page);
    await page.goto(`${base}/login`);
    await page.getByLabel('Email').fill(TWIN.email);
    await page.getByLabel('Password').fill(TWIN.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText('This email signs in to several tenants').waitFor();
    await page.getByLabel('Tenant (optional)').fill('globex');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${base}/`);
    const session = await storedSession(page);
    const me = await fetch(`${base}/api/auth/me`, {
      headers: { authorization: `Bearer ${session?.accessToken}` },
    });
    assert.equal((await me.json()).tid, 'globex');
    assert.deepEqual(watch.cspViolations, []);
    await page.close();
  });
});
