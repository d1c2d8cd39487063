// The template page's locale variants (docs/localization.md, docs/localization.md) in Chromium: listed,
// added, edited and deleted, each saved through the API as a new version; and its default
// category (docs/preferences.md), saved with a version.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import type { Herald } from '../../src/main.ts';
import { apiCall } from '../helpers/api-call.ts';
import { adminToken, browserSkip, launchBrowser, logIn, startStack } from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';

describe('locale variants on the template page, in Chromium', { skip: browserSkip() }, () => {
  let herald: (Herald & { gatewayUrl: string }) | undefined;
  let browser: Browser;
  let base: string;
  let token: string;

  before(async () => {
    herald = await startStack();
    base = herald.gatewayUrl;
    browser = await launchBrowser();
    token = await adminToken(browser, base);
  });
  after(async () => {
    await browser?.close();
    await herald?.close();
  });

  const locales = async () =>
    (await apiCall(base, token, 'GET', '/api/templates/greeting')).json.locales.map(
      (l: { locale: string; subject: string }) => `${l.locale}: ${l.subject}`,
    );

  it('lists, adds, edits and deletes a variant', async () => {
    const created = await apiCall(base, token, 'POST', '/api/templates', {
      key: 'greeting',
      channel: 'email',
      subject: 'Hello {{ name }}',
      text: 'Hello',
    });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const seeded = await apiCall(base, token, 'PUT', '/api/templates/greeting/locales/de', {
      subject: 'Hallo',
      text: 'Hallo',
    });
    assert.equal(seeded.status, 200);
    const page = await browser.newPage();
    await logIn(page, base);
    await page.goto(`${base}/templates`);
    await page.getByRole('button', { name: 'greeting' }).click();
    const variants = page.getByRole('region', { name: 'Locale variants' });
    await variants.getByTestId('variant-de').waitFor();

    // Added: a locale typed in any case is saved canonical.
    await variants.getByLabel(/^Locale/).fill('fr-ca');
    await variants.getByLabel('Variant subject').fill('Bonjour {{ name }}');
    await variants.getByLabel('Variant text').fill('Bienvenue');
    await variants.getByRole('button', { name: 'Save variant' }).click();
    await variants.getByTestId('variant-fr-CA').waitFor();
    assert.deepEqual(await locales(), ['de: Hallo', 'fr-CA: Bonjour {{ name }}']);

    // Edited: the form takes the variant's fields.
    await variants.getByRole('button', { name: 'Edit de' }).click();
    assert.equal(await variants.getByLabel('Variant subject').inputValue(), 'Hallo');
    await variants.getByLabel('Variant subject').fill('Guten Tag');
    await variants.getByRole('button', { name: 'Save variant' }).click();
    await eventually(async () => (await locales())[0] === 'de: Guten Tag', 10_000, 'the edited variant');

    // A bad tag is refused, saying why.
    await variants.getByLabel(/^Locale/).fill('not_a_tag');
    await variants.getByRole('button', { name: 'Save variant' }).click();
    await variants
      .getByRole('alert')
      .getByText(/BCP 47/)
      .waitFor();

    // Deleted.
    await variants.getByRole('button', { name: 'Delete de' }).click();
    await variants.getByTestId('variant-de').waitFor({ state: 'detached' });
    assert.deepEqual(await locales(), ['fr-CA: Bonjour {{ name }}']);
    await page.close();
  });

  it('saves and clears the default category with a new version', async () => {
    const category = async () => (await apiCall(base, token, 'GET', '/api/templates/greeting')).json.category;
    const page = await browser.newPage();
    await logIn(page, base);
    await page.goto(`${base}/templates`);
    await page.getByRole('button', { name: 'greeting' }).click();
    const field = page.getByLabel(/^Default category/);
    assert.equal(await field.inputValue(), '');
    await field.fill('digest');
    await page.getByRole('button', { name: 'Save new version' }).click();
    await eventually(async () => (await category()) === 'digest', 10_000, 'the category saved');
    await page.reload();
    await page.getByRole('button', { name: 'greeting' }).click();
    assert.equal(await page.getByLabel(/^Default category/).inputValue(), 'digest');
    await page.getByLabel(/^Default category/).fill('');
    await page.getByRole('button', { name: 'Save new version' }).click();
    await eventually(async () => (await category()) === null, 10_000, 'the category cleared');
    await page.close();
  });
});
