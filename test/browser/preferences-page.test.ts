// The hosted preferences page in Chromium, opened through the gateway as a recipient opens its
// `preferencesUrl`: no script, the page's own CSP on the answer, a box clicked and the form
// submitted as a browser submits it, the choices saved and the page shown again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { PUBLIC_PAGE_CSP } from '../../src/http/html-page.ts';
import type { Herald } from '../../src/main.ts';
import { browserSkip, launchBrowser, startStack, watchPage } from '../helpers/browser.ts';

describe('the hosted preferences page in Chromium', { skip: browserSkip() }, () => {
  let herald: (Herald & { gatewayUrl: string }) | undefined;
  let browser: Browser;
  let link: string;

  before(async () => {
    herald = await startStack();
    browser = await launchBrowser();
    const { store } = herald.deps;
    const fields = { description: null, required: false, defaultChannels: {} };
    await store.categories.put(
      'default',
      'marketing',
      { ...fields, description: 'Offers <b>and</b> news' },
      1,
    );
    await store.categories.put('default', 'security', { ...fields, required: true }, 1);
    await store.recipients.put('default', [{ id: 'user-7', profile: { email: 'ada@example.com' } }], 1);
    const token = await herald.deps.preferenceTokens.make({ tenant: 'default', id: 'user-7' });
    link = `${herald.gatewayUrl}/api/preferences/${token}`;
  });
  after(async () => {
    await browser?.close();
    await herald?.close();
  });

  it('shows the page under its policy with no CSP violation (its one stylesheet is allowed by hash)', async () => {
    const page = await browser.newPage();
    const watch = await watchPage(page);
    await page.goto(link);
    await page.getByRole('button', { name: 'Save' }).waitFor();
    // The stylesheet applied: the table's cells are centred as it says.
    const align = await page
      .locator('td')
      .first()
      .evaluate((td) => getComputedStyle(td).textAlign);
    assert.equal(align, 'center');
    assert.deepEqual(watch.cspViolations, []);
    assert.deepEqual(watch.errors, []);
    await page.close();
  });

  it('saves a clicked box through the gateway with script turned off', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    const answer = await page.goto(link);
    assert.equal(answer?.status(), 200);
    // The page's own policy reaches the browser through the gateway.
    assert.equal(answer?.headers()['content-security-policy'], PUBLIC_PAGE_CSP);
    assert.equal(answer?.headers()['x-frame-options'], 'DENY', 'the gateway adds its own headers too');
    await page.getByText('Offers <b>and</b> news').waitFor();
    const email = page.getByLabel('marketing: Email');
    assert.equal(await email.isChecked(), true);
    assert.equal(await page.getByLabel('security: Email').isDisabled(), true);
    await email.click();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Your choices are saved.').waitFor();
    assert.equal(await page.getByLabel('marketing: Email').isChecked(), false);
    const stored = await herald?.deps.store.recipients.get('default', 'user-7');
    assert.deepEqual(stored?.preferences.categories.marketing, {
      email: false,
      sms: true,
      push: true,
      inapp: true,
    });
    assert.equal(stored?.preferences.categories.security, undefined);
    await context.close();
  });
});
