// The account page in Chromium: a password change (a wrong current password is shown and keeps
// the session; the right one ends every session) and "sign out everywhere".
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import type { Herald } from '../../src/main.ts';
import { createUser } from '../helpers/auth.ts';
import {
  browserSkip,
  launchBrowser,
  logIn,
  refreshStatus,
  startStack,
  storedSession,
  watchPage,
} from '../helpers/browser.ts';

const KIM = { email: 'kim@example.com', password: 'kim has a long password' };
const NEW_PASSWORD = 'kim has a newer password';

describe('web UI account page in Chromium', { skip: browserSkip() }, () => {
  let herald: (Herald & { gatewayUrl: string }) | undefined;
  let browser: Browser;
  let base: string;

  before(async () => {
    herald = await startStack();
    base = herald.gatewayUrl;
    browser = await launchBrowser();
    await createUser(herald.deps, { ...KIM, role: 'sender' });
  });
  after(async () => {
    await browser?.close();
    await herald?.close();
  });

  it('changes the password: a wrong current one is shown, the right one ends every session', async () => {
    const page = await browser.newPage();
    const watch = await watchPage(page);
    await logIn(page, base, KIM);
    const before = await storedSession(page);
    assert.ok(before);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.waitForURL(`${base}/account`);
    await page.getByLabel('Current password').fill('not my password');
    await page.getByLabel('New password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('The current password is wrong.').waitFor();
    assert.equal(page.url(), `${base}/account`, 'still signed in');
    assert.ok(await storedSession(page));
    await page.getByLabel('Current password').fill(KIM.password);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.waitForURL(`${base}/login`);
    assert.equal(await storedSession(page), null);
    assert.equal(await refreshStatus(base, before.refreshToken), 401);
    await logIn(page, base, { ...KIM, password: NEW_PASSWORD });
    assert.deepEqual(watch.cspViolations, []);
    await page.close();
  });

  it('signs out everywhere: the sessions of other devices end too', async () => {
    const other = await browser.newPage();
    await logIn(other, base, { ...KIM, password: NEW_PASSWORD });
    const otherSession = await storedSession(other);
    assert.ok(otherSession);
    const page = await browser.newPage();
    await logIn(page, base, { ...KIM, password: NEW_PASSWORD });
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await page.waitForURL(`${base}/login?signed-out=everywhere`);
    assert.equal(await refreshStatus(base, otherSession.refreshToken), 401);
    await page.close();
    await other.close();
  });
});
