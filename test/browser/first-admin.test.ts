// #49.1: before anyone can sign in, the sign-in page says how to create the first admin; the API
// tells a stranger only that no user exists.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { type Herald, startHerald } from '../../src/main.ts';
import { createUser } from '../helpers/auth.ts';
import { browserSkip, ensureWebBuild, launchBrowser } from '../helpers/browser.ts';
import { testConfig } from '../helpers/config.ts';

describe('the sign-in page of an empty store in Chromium', { skip: browserSkip() }, () => {
  let herald: Herald;
  let browser: Browser;
  let base: string;

  before(async () => {
    ensureWebBuild();
    herald = await startHerald(testConfig());
    base = herald.gatewayUrl as string;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await herald?.close();
  });

  it('says how to create the first admin until a user exists', async () => {
    const page = await browser.newPage();
    const setup = async () => (await fetch(`${base}/api/auth/setup`)).json();
    assert.deepEqual(await setup(), { setupNeeded: true });
    await page.goto(`${base}/login`);
    const hint = page.getByRole('status', { name: 'Create the first admin' });
    await hint.waitFor();
    const text = (await hint.textContent()) ?? '';
    assert.match(text, /No user exists yet/);
    assert.match(text, /npm run herald -- users add --email you@example\.com --password-stdin --role admin/);
    assert.match(text, /HERALD_ADMIN_EMAIL/);

    await createUser(herald.deps, { email: 'first@example.com' });
    assert.deepEqual(await setup(), { setupNeeded: false });
    await page.reload();
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    await page.waitForLoadState('networkidle');
    assert.equal(await page.getByText('No user exists yet').count(), 0);
    await page.close();
  });
});
