// The recipients page in Chromium: a recipient found by its ID (kept in the address bar), its
// profile, its preferences shown and changed, and the link to its own preferences page.
// It creates the recipient with PUT /recipients/{id} (docs/recipients.md), the recipients API of issue #50.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import type { Herald } from '../../src/main.ts';
import { apiCall } from '../helpers/api-call.ts';
import { adminToken, browserSkip, launchBrowser, logIn, startStack, watchPage } from '../helpers/browser.ts';

describe('web UI recipients page in Chromium', { skip: browserSkip() }, () => {
  let herald: (Herald & { gatewayUrl: string }) | undefined;
  let browser: Browser;
  let base: string;

  before(async () => {
    herald = await startStack();
    base = herald.gatewayUrl;
    browser = await launchBrowser();
    const token = await adminToken(browser, base);
    const put = await apiCall(base, token, 'PUT', '/api/recipients/user-1842', {
      email: 'ada@example.com',
      name: 'Ada',
      locale: 'fr-CA',
    });
    assert.equal(put.status, 201, JSON.stringify(put.json));
    const category = await apiCall(base, token, 'PUT', '/api/categories/marketing', {
      defaultChannels: { sms: false },
    });
    assert.equal(category.status, 201);
    await apiCall(base, token, 'PUT', '/api/recipients/user-1842/preferences', {
      channels: { push: false },
    });
  });
  after(async () => {
    await browser?.close();
    await herald?.close();
  });

  it('finds a recipient by ID, shows its profile and preferences, and saves a change', async () => {
    const page = await browser.newPage();
    const watch = await watchPage(page);
    await logIn(page, base);
    await page.getByRole('link', { name: 'Recipients' }).click();
    await page.getByLabel('Recipient ID').fill('user-1842');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.waitForURL(`${base}/recipients?id=user-1842`);
    await page.getByText('ada@example.com').waitFor();
    await page.getByText('fr-CA').waitFor();
    const link = await page
      .getByRole('link', { name: "Open the recipient's preferences page" })
      .getAttribute('href');
    assert.match(link ?? '', /\/preferences\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);

    // The choices as stored, and what they do: push is off for every category.
    assert.equal(await page.getByLabel('Every channel as a whole push').inputValue(), 'off');
    assert.equal(await page.getByLabel('marketing email').inputValue(), '');
    await page.getByLabel('marketing email').selectOption('off');
    await page.getByLabel('marketing push').selectOption('on');
    await page.getByRole('button', { name: 'Save preferences' }).click();
    await page.getByText('Saved.').waitFor();
    const stored = await herald?.deps.store.recipients.get('default', 'user-1842');
    assert.deepEqual(stored?.preferences, {
      channels: { push: false },
      categories: { marketing: { email: false, push: true } },
    });

    // Reloaded from the address bar, the page finds the recipient again.
    await page.reload();
    assert.equal(await page.getByLabel('marketing push').inputValue(), 'on');
    assert.deepEqual(watch.cspViolations, []);
    await page.close();
  });

  it('says so for an unknown recipient', async () => {
    const page = await browser.newPage();
    await logIn(page, base);
    await page.goto(`${base}/recipients?id=nobody`);
    await page
      .getByRole('alert')
      .getByText(/no such recipient/i)
      .waitFor();
    await page.close();
  });
});
