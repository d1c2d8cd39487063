// The suppressions page in Chromium: suppressed recipients listed masked, a lookup by the full
// recipient, removal by an admin and adding with a reason in the admin's own words; a viewer sees
// the list but no add or remove buttons.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import type { Herald } from '../../src/main.ts';
import { createUser } from '../helpers/auth.ts';
import { browserSkip, launchBrowser, logIn, startStack, watchPage } from '../helpers/browser.ts';

const VIEWER = { email: 'vi@example.com', password: 'vi has a long password' };

describe('web UI suppressions page in Chromium', { skip: browserSkip() }, () => {
  let herald: (Herald & { gatewayUrl: string }) | undefined;
  let browser: Browser;
  let base: string;

  before(async () => {
    herald = await startStack();
    base = herald.gatewayUrl;
    browser = await launchBrowser();
    await createUser(herald.deps, { ...VIEWER, role: 'viewer' });
    await herald.deps.store.suppressions.add(
      [{ tenant: 'default', channel: 'email', recipient: 'bounced@example.com', reason: 'bounce' }],
      Date.now(),
    );
  });
  after(async () => {
    await browser?.close();
    await herald?.close();
  });

  it('lists masked, looks a recipient up, and lets an admin remove the suppression', async () => {
    const page = await browser.newPage();
    const watch = await watchPage(page);
    await logIn(page, base);
    await page.getByRole('link', { name: 'Suppressions' }).click();
    await page.waitForURL(`${base}/suppressions`);
    await page.getByRole('cell', { name: 'b***@example.com' }).waitFor();
    assert.equal(await page.getByText('bounced@example.com').count(), 0, 'never shown unmasked');
    await page.getByLabel('Recipient').fill('bounced@example.com');
    await page.getByRole('button', { name: 'Check' }).click();
    await page.getByText(/Suppressed since .* \(bounce\)/).waitFor();
    await page.getByRole('button', { name: 'Remove suppression' }).click();
    await page.getByText('Not suppressed.').waitFor();
    await page.getByText('No suppressed recipients.').waitFor();
    const left = (await herald?.deps.store.suppressions.list('default', { limit: 10 }))?.items;
    assert.deepEqual(left, []);
    assert.deepEqual(watch.cspViolations, []);
    await page.close();
  });

  it('lets an admin suppress a recipient with a reason in their own words, shown as given', async () => {
    const page = await browser.newPage();
    const watch = await watchPage(page);
    await logIn(page, base);
    await page.goto(`${base}/suppressions`);
    await page.getByLabel('Recipient').fill('phoned@example.com');
    await page.getByRole('button', { name: 'Check' }).click();
    await page.getByText('Not suppressed.').waitFor();
    await page.getByLabel('Reason').fill('asked by phone, ticket 4411');
    await page.getByRole('button', { name: 'Suppress it' }).click();
    await page.getByText(/Suppressed since .* \(asked by phone, ticket 4411\)/).waitFor();
    await page.getByRole('cell', { name: 'asked by phone, ticket 4411' }).waitFor();
    const stored = (await herald?.deps.store.suppressions.list('default', { channel: 'email', limit: 10 }))
      ?.items;
    assert.deepEqual(
      stored?.map((s) => [s.recipient, s.reason]),
      [['phoned@example.com', 'asked by phone, ticket 4411']],
    );
    assert.deepEqual(watch.cspViolations, []);
    await page.close();
  });

  it('shows a viewer the list without add or remove', async () => {
    await herald?.deps.store.suppressions.add(
      [{ tenant: 'default', channel: 'sms', recipient: '+15550101234', reason: 'opt_out' }],
      Date.now(),
    );
    const page = await browser.newPage();
    await logIn(page, base, VIEWER);
    await page.goto(`${base}/suppressions`);
    await page.getByRole('cell', { name: '+*******1234' }).waitFor();
    await page.getByLabel('Channel').first().selectOption('sms');
    await page.getByLabel('Recipient').fill('+15550101234');
    await page.getByRole('button', { name: 'Check' }).click();
    await page.getByText(/Suppressed since .* \(opt_out\)/).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Remove suppression' }).count(), 0);
    await page.close();
  });
});
