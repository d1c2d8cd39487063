import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Herald } from '../../src/main.ts';
import { createUser } from '../helpers/auth.ts';
import {
  ADMIN,
  browserSkip,
  launchBrowser,
  startStack,
  storedSession,
  watchPage,
} from '../helpers/browser.ts';
import { startIdp, type TestIdp } from '../helpers/oidc.ts';

describe('OIDC sign-in in Chromium against a real local OpenID provider', { skip: browserSkip() }, () => {
  let herald: (Herald & { gatewayUrl: string }) | undefined;
  let idp: TestIdp | undefined;
  let browser: Browser;
  let base: string;

  before(async () => {
    idp = await startIdp();
    herald = await startStack({
      HERALD_OIDC_ISSUER: idp.issuer,
      HERALD_OIDC_CLIENT_ID: idp.clientId,
      HERALD_OIDC_CLIENT_SECRET: idp.clientSecret,
    });
    base = herald.gatewayUrl;
    idp.configure(`${base}/oidc/callback`);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await herald?.close();
    await idp?.close();
  });

  /**
   * Goes through the provider's login and consent and returns the callback URL it sent the browser
   * to. The UI's script is held back on that page, so the sign-in stays pending in sessionStorage
   * and the test decides what the callback page sees.
   */
  async function signInAtProvider(page: Page, login: string): Promise<string> {
    await page.goto(`${base}/login`);
    await page.getByRole('button', { name: 'Sign in with single sign-on' }).click();
    await page.waitForURL(`${idp?.issuer}/**`);
    await page.route(`${base}/assets/**`, (route) => route.abort());
    await page.locator('input[name=login]').fill(login);
    await page.locator('input[name=password]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    const consent = page.getByRole('button', { name: 'Continue' });
    const deadline = Date.now() + 20_000;
    while (!page.url().startsWith(`${base}/oidc/callback?`)) {
      if (Date.now() > deadline) throw new Error(`no callback; at ${page.url()}`);
      if (await consent.isVisible().catch(() => false)) await consent.click().catch(() => {});
      await page.waitForTimeout(100);
    }
    await page.unroute(`${base}/assets/**`);
    return page.url();
  }

  async function expectRefused(page: Page, url: string, message: RegExp) {
    await page.goto(url);
    await page.getByRole('alert').waitFor();
    assert.match((await page.getByRole('alert').textContent()) ?? '', message);
    assert.equal(await storedSession(page), null);
  }

  it('signs in with authorization code + PKCE S256 and gets Herald tokens', async () => {
    const page = await browser.newPage();
    const watch = await watchPage(page);
    const callback = await signInAtProvider(page, ADMIN.email);
    const sent = new URL(watch.urls.find((u) => u.includes('/auth?')) ?? 'http://x');
    assert.equal(sent.searchParams.get('code_challenge_method'), 'S256');
    assert.ok(sent.searchParams.get('nonce'));
    await page.goto(callback);
    await page.waitForURL(`${base}/`);
    const session = await storedSession(page);
    assert.ok(session?.accessToken);
    // The token works on the API through the gateway, and it is the mapped Herald user's.
    const me = await fetch(`${base}/api/auth/me`, {
      headers: { authorization: `Bearer ${session.accessToken}` },
    });
    assert.equal((await me.json()).email, ADMIN.email);
    assert.ok(watch.urls.every((u) => !u.includes(session.accessToken)));
    assert.deepEqual(watch.cspViolations, []);

    // Replaying the same callback URL finds no pending state in this tab: refused.
    await page.evaluate(() => localStorage.clear());
    await expectRefused(page, callback, /missing or replayed/);
    await page.close();
  });

  it('refuses a tampered state before the code is exchanged', async () => {
    const page = await browser.newPage();
    const watch = await watchPage(page);
    const callback = new URL(await signInAtProvider(page, ADMIN.email));
    callback.searchParams.set('state', `${callback.searchParams.get('state')}x`);
    await expectRefused(page, callback.toString(), /does not match/);
    assert.ok(!watch.urls.some((u) => u.includes('/api/auth/oidc/callback')), 'the code was never sent');
    await page.close();
  });

  it('refuses a missing state and an expired one', async () => {
    const page = await browser.newPage();
    const callback = new URL(await signInAtProvider(page, ADMIN.email));
    const withoutState = new URL(callback);
    withoutState.searchParams.delete('state');
    const pending = await page.evaluate(() => sessionStorage.getItem('herald.oidc'));
    await expectRefused(page, withoutState.toString(), /no state/);
    // Put the pending sign-in back, eleven minutes old: the callback is refused as expired.
    const old = { ...JSON.parse(pending ?? '{}'), createdAt: Date.now() - 11 * 60_000 };
    await page.evaluate((value) => sessionStorage.setItem('herald.oidc', value), JSON.stringify(old));
    await expectRefused(page, callback.toString(), /expired/);
    await page.close();
  });

  it('refuses an identity without a Herald account', async () => {
    const page = await browser.newPage();
    const callback = await signInAtProvider(page, 'stranger@example.com');
    await expectRefused(page, callback, /No enabled Herald user/);
    await page.close();
  });

  /**
   * Signs in at the provider as `login` and follows the callback; the Herald user's email (and,
   * with `withTenant`, its tenant after a space), or the refusal.
   */
  async function signInAs(login: string, withTenant = false): Promise<string> {
    const page = await browser.newPage();
    try {
      await page.goto(await signInAtProvider(page, login));
      const outcome = await Promise.race([
        page.waitForURL(`${base}/`).then(() => 'in'),
        page
          .getByRole('alert')
          .waitFor()
          .then(() => 'refused'),
      ]);
      if (outcome === 'refused') return `refused: ${await page.getByRole('alert').textContent()}`;
      const session = await storedSession(page);
      const me = await fetch(`${base}/api/auth/me`, {
        headers: { authorization: `Bearer ${session?.accessToken}` },
      });
      const who = await me.json();
      return withTenant ? `${who.email} ${who.tid}` : who.email;
    } finally {
      await page.close();
    }
  }

  it('links the identity at the first sign-in and matches on issuer and subject afterwards', async () => {
    const accounts = (idp as TestIdp).accounts;
    await createUser((herald as Herald).deps, { email: 'lin@example.com', role: 'viewer' });
    accounts.set('lin-at-idp', { email: 'lin@example.com' });
    assert.equal(await signInAs('lin-at-idp'), 'lin@example.com');
    // The email changes at the provider: the link, not the email, decides.
    accounts.set('lin-at-idp', { email: 'lin.new@example.com' });
    assert.equal(await signInAs('lin-at-idp'), 'lin@example.com');
  });

  it('does not let another identity take over a linked account by showing its email', async () => {
    const accounts = (idp as TestIdp).accounts;
    await createUser((herald as Herald).deps, { email: 'max@example.com', role: 'viewer' });
    accounts.set('max-at-idp', { email: 'max@example.com' });
    assert.equal(await signInAs('max-at-idp'), 'max@example.com');
    accounts.set('intruder-at-idp', { email: 'max@example.com' });
    assert.match(await signInAs('intruder-at-idp'), /refused: .*linked to another identity/);
  });

  it('reads the email at the userinfo endpoint when the ID token has none', async () => {
    const accounts = (idp as TestIdp).accounts;
    await createUser((herald as Herald).deps, { email: 'uma@example.com', role: 'viewer' });
    accounts.set('uma-at-idp', { email: 'uma@example.com', userinfoOnly: true });
    assert.equal(await signInAs('uma-at-idp'), 'uma@example.com');
  });

  it('links a first sign-in only to a user of HERALD_OIDC_TENANT (default): never to another tenant’s (#46)', async () => {
    const deps = (herald as Herald).deps;
    const accounts = (idp as TestIdp).accounts;
    // Acme's admin made a user of the CFO's address, with a password of its own.
    await createUser(deps, { email: 'cfo@globex.test', role: 'admin', tenant: 'acme' });
    accounts.set('cfo-at-idp', { email: 'cfo@globex.test' });
    assert.match(await signInAs('cfo-at-idp'), /refused: .*No enabled Herald user/);
    assert.equal(await deps.store.auth.findUserByIdentity(idp?.issuer as string, 'cfo-at-idp'), undefined);
    // The operator makes the real user in tenant default: the identity links to it, not acme's.
    await createUser(deps, { email: 'cfo@globex.test', role: 'viewer' });
    assert.equal(await signInAs('cfo-at-idp', true), 'cfo@globex.test default');
    assert.equal(
      (await deps.store.auth.findUserByIdentity(idp?.issuer as string, 'cfo-at-idp'))?.tenant,
      'default',
    );
  });

  it('drops a link to a user outside HERALD_OIDC_TENANT (made before #46) and links afresh', async () => {
    const deps = (herald as Herald).deps;
    const accounts = (idp as TestIdp).accounts;
    const squatted = await createUser(deps, { email: 'ceo@globex.test', role: 'admin', tenant: 'acme' });
    await createUser(deps, { email: 'ceo@globex.test', role: 'viewer' });
    await deps.store.auth.linkIdentity(idp?.issuer as string, 'ceo-at-idp', squatted.id, Date.now());
    accounts.set('ceo-at-idp', { email: 'ceo@globex.test' });
    assert.equal(await signInAs('ceo-at-idp', true), 'ceo@globex.test default');
    assert.equal(
      (await deps.store.auth.findUserByIdentity(idp?.issuer as string, 'ceo-at-idp'))?.tenant,
      'default',
    );
  });
});
