// #49.14 in Chromium: an admin finds notifications by exact recipient from the list page's
// search box, which the address bar keeps; a caller without the admin scope has no such box.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import type { Herald } from '../../src/main.ts';
import { apiCall } from '../helpers/api-call.ts';
import { adminToken, browserSkip, launchBrowser, logIn, startStack, watchPage } from '../helpers/browser.ts';

describe('the notification list’s recipient search in Chromium', { skip: browserSkip() }, () => {
  let herald: (Herald & { gatewayUrl: string }) | undefined;
  let browser: Browser;
  let base: string;
  let token: string;
  let found: string;
  let other: string;
  const viewer = { email: 'viewer@example.com', password: 'a viewer password of some length' };

  before(async () => {
    herald = await startStack();
    base = herald.gatewayUrl;
    browser = await launchBrowser();
    token = await adminToken(browser, base);
    const send = async (address: string) => {
      const answer = await apiCall(base, token, 'POST', '/api/notifications', {
        channel: 'email',
        recipient: { email: address },
        content: { subject: 'Hi', text: 'Hello' },
      });
      assert.equal(answer.status, 201, JSON.stringify(answer.json));
      return answer.json.notificationId as string;
    };
    found = await send('ada.search@example.com');
    other = await send('bob.search@example.com');
    const user = await apiCall(base, token, 'POST', '/api/admin/users', { ...viewer, role: 'viewer' });
    assert.equal(user.status, 201, JSON.stringify(user.json));
  });
  after(async () => {
    await browser?.close();
    await herald?.close();
  });

  it('finds an exact address for an admin and keeps it in the address bar', async () => {
    const page = await browser.newPage();
    const watch = await watchPage(page);
    await logIn(page, base);
    await page.goto(`${base}/notifications`);
    await page.getByRole('link', { name: other }).waitFor();
    await page.getByLabel('Recipient').fill(' ADA.Search@Example.com ');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.waitForURL(`${base}/notifications?recipient=ADA.Search%40Example.com`);
    await page.getByRole('link', { name: found }).waitFor();
    assert.equal(await page.getByRole('link', { name: other }).count(), 0);
    // A reload (or a shared link) shows the same search.
    await page.reload();
    assert.equal(await page.getByLabel('Recipient').inputValue(), 'ADA.Search@Example.com');
    await page.getByRole('link', { name: found }).waitFor();
    assert.equal(await page.getByRole('link', { name: other }).count(), 0);
    // Clear shows every notification again.
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.waitForURL(`${base}/notifications`);
    await page.getByRole('link', { name: other }).waitFor();
    assert.deepEqual(watch.errors, []);
    await page.close();
  });

  it('shows no recipient search to a caller without the admin scope', async () => {
    const page = await browser.newPage();
    await logIn(page, base, viewer);
    await page.goto(`${base}/notifications?recipient=ada.search%40example.com`);
    await page.getByRole('link', { name: other }).waitFor();
    assert.equal(await page.getByLabel('Recipient').count(), 0);
    assert.equal(await page.locator('.problem').count(), 0);
    await page.close();
  });
});
