// #50: the topics and broadcasts pages in Chromium. Topics: create one, add subscribers in a
// batch (an unknown ID named as refused), the count shown, remove one. Broadcasts: create one
// to that topic and watch its fan-out finish with its notifications counted by status.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import type { Herald } from '../../src/main.ts';
import { browserSkip, launchBrowser, logIn, startStack, watchPage } from '../helpers/browser.ts';

describe('web UI topics and broadcasts pages in Chromium', { skip: browserSkip() }, () => {
  let herald: (Herald & { gatewayUrl: string }) | undefined;
  let browser: Browser;
  let base: string;

  before(async () => {
    herald = await startStack({ HERALD_POLL_MS: '50' });
    base = herald.gatewayUrl;
    browser = await launchBrowser();
    await herald.deps.store.recipients.put(
      'default',
      ['ada', 'bob', 'cy'].map((id) => ({ id, profile: { email: `${id}@example.com` } })),
      Date.now(),
    );
  });
  after(async () => {
    await browser?.close();
    await herald?.close();
  });

  it('creates a topic, adds subscribers (naming the refused), shows the count and removes one', async () => {
    const page = await browser.newPage();
    const watch = await watchPage(page);
    await logIn(page, base);
    await page.getByRole('link', { name: 'Topics' }).click();
    await page.waitForURL(`${base}/topics`);
    await page.getByLabel('Key').fill('team');
    await page.getByLabel('Name').fill('The team');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Subscribers of team' }).waitFor();
    await page.getByLabel('Recipient IDs').fill('ada, bob\nghost cy');
    await page.getByRole('button', { name: 'Add' }).click();
    await page.getByText('3 added. Refused (no such recipient): ghost.').waitFor();
    await page.locator('tr[data-topic="team"] td.subscribers', { hasText: '3' }).waitFor();
    await page.locator('tr[data-subscriber="bob"]').getByRole('button', { name: 'Remove' }).click();
    await page.locator('tr[data-topic="team"] td.subscribers', { hasText: '2' }).waitFor();
    assert.equal(await page.locator('tr[data-subscriber="bob"]').count(), 0);
    assert.equal((await herald?.deps.store.topics.get('default', 'team'))?.subscribers, 2);
    assert.deepEqual(watch.cspViolations, []);
    await page.close();
  });

  it('creates a broadcast and follows its fan-out to the end, its notifications charted by status', async () => {
    await herald?.deps.store.topics.put('default', 'everyone', null, Date.now());
    await herald?.deps.store.topics.subscribe('default', 'everyone', ['ada', 'bob', 'cy'], Date.now());
    const page = await browser.newPage();
    const watch = await watchPage(page);
    await logIn(page, base);
    await page.getByRole('link', { name: 'Broadcasts' }).click();
    await page.waitForURL(`${base}/broadcasts`);
    await page.getByLabel('Topic').fill('everyone');
    await page.getByLabel('Priority').selectOption('LOW');
    await page.getByLabel('Subject').fill('News');
    await page.getByLabel('Text').fill('Hello all');
    await page.getByRole('button', { name: 'Broadcast' }).click();
    await page.locator('.broadcast-status', { hasText: 'DONE' }).waitFor({ timeout: 20_000 });
    await page.locator('.broadcast-created', { hasText: '3' }).waitFor();
    await page.getByRole('img', { name: 'Its notifications by status' }).waitFor();
    const id = await page.locator('[data-broadcast]').getAttribute('data-broadcast');
    assert.equal((await herald?.deps.store.broadcasts.get('default', id as string))?.created, 3);
    assert.deepEqual(watch.cspViolations, []);
    await page.close();
  });

  it('shows a broadcast problem as the API words it', async () => {
    const page = await browser.newPage();
    await logIn(page, base);
    await page.goto(`${base}/broadcasts`);
    await page.getByLabel('Topic').fill('no-such-topic');
    await page.getByLabel('Subject').fill('News');
    await page.getByLabel('Text').fill('Hello');
    await page.getByRole('button', { name: 'Broadcast' }).click();
    await page.getByText('No topic "no-such-topic".').waitFor();
    await page.close();
  });
});
