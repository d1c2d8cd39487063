// The categories page in Chromium: an admin declares a category with a default, edits it (a PUT
// replaces it whole) and deletes it; the list shows what the API holds.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import type { Herald } from '../../src/main.ts';
import { browserSkip, launchBrowser, logIn, startStack, watchPage } from '../helpers/browser.ts';

describe('web UI categories page in Chromium', { skip: browserSkip() }, () => {
  let herald: (Herald & { gatewayUrl: string }) | undefined;
  let browser: Browser;
  let base: string;

  before(async () => {
    herald = await startStack();
    base = herald.gatewayUrl;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await herald?.close();
  });

  const stored = () => herald?.deps.store.categories.get('default', 'marketing');

  it('declares, edits and deletes a category', async () => {
    const page = await browser.newPage();
    const watch = await watchPage(page);
    await logIn(page, base);
    await page.getByRole('link', { name: 'Categories' }).click();
    await page.waitForURL(`${base}/categories`);
    await page.getByText('No categories yet.').waitFor();

    await page.getByLabel('Name').fill('marketing');
    await page.getByLabel('Description').fill('Offers and product news');
    await page.getByLabel('Default for sms').selectOption('off');
    await page.getByRole('button', { name: 'Save category' }).click();
    await page.getByRole('cell', { name: 'Offers and product news' }).waitFor();
    await page.getByRole('cell', { name: 'sms off' }).waitFor();
    const made = await stored();
    assert.deepEqual(
      [made?.description, made?.required, made?.defaultChannels],
      ['Offers and product news', false, { sms: false }],
    );

    await page.getByRole('button', { name: 'Edit marketing' }).click();
    assert.equal(await page.getByLabel('Name').inputValue(), 'marketing');
    assert.equal(await page.getByLabel('Default for sms').inputValue(), 'off');
    await page.getByLabel('Required (ignores opt-outs)').check();
    await page.getByLabel('Default for sms').selectOption('');
    await page.getByRole('button', { name: 'Save category' }).click();
    await page.getByRole('cell', { name: 'yes' }).waitFor();
    const edited = await stored();
    assert.deepEqual([edited?.required, edited?.defaultChannels], [true, {}]);

    // A bad name is the API's 400, shown beside the form.
    await page.getByLabel('Name').fill('my category');
    await page.getByRole('button', { name: 'Save category' }).click();
    await page.getByText(/must be a category name/).waitFor();

    await page.getByRole('button', { name: 'Delete marketing' }).click();
    await page.getByText('No categories yet.').waitFor();
    assert.equal(await stored(), null);
    assert.deepEqual(watch.cspViolations, []);
    await page.close();
  });
});
