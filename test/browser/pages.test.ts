// The web UI's pages in Chromium (issue #49): long content wraps, a phone's width fits every
// page, a new client's secret comes with a copy button and a working curl command, the
// notification list takes its filters from the address bar, the sandbox page says which
// channels go to the sandbox, and the admin page shows the operator each tenant's quota.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import type { Herald } from '../../src/main.ts';
import { apiCall } from '../helpers/api-call.ts';
import { createUser, tokenFor } from '../helpers/auth.ts';
import {
  adminToken,
  browserSkip,
  launchBrowser,
  logIn,
  settled,
  startStack,
  watchPage,
} from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';

const PHONE = { width: 390, height: 844 };

describe('web UI pages in Chromium', { skip: browserSkip() }, () => {
  let herald: (Herald & { gatewayUrl: string }) | undefined;
  let browser: Browser;
  let base: string;
  let token: string;
  let failedId: string;
  let deliveredId: string;

  before(async () => {
    // Rendering gets time to spare: the shared test machine is slow, and this file is not about it.
    herald = await startStack({ HERALD_RENDER_TIMEOUT_MS: '10000' });
    base = herald.gatewayUrl;
    browser = await launchBrowser();
    token = await adminToken(browser, base);
    const email = await apiCall(base, token, 'POST', '/api/notifications', {
      channel: 'email',
      recipient: { email: 'a-rather-long-recipient-address-for-a-phone@example.com' },
      content: { subject: 'A subject long enough to need wrapping on a small phone screen', text: 'Hi' },
    });
    assert.equal(email.status, 201);
    // One word of 1,600 characters (the most an SMS may have), delivered to the sandbox.
    const long = await apiCall(base, token, 'POST', '/api/notifications', {
      channel: 'sms',
      recipient: { phone: '+15550101234' },
      content: { text: 'x'.repeat(1600) },
    });
    assert.equal(long.status, 201, JSON.stringify(long.json));
    deliveredId = long.json.notificationId;
    // Rendered past 1,600 characters: the sandbox refuses it as Twilio would, so it fails.
    const tooLong = await apiCall(base, token, 'POST', '/api/notifications', {
      channel: 'sms',
      recipient: { phone: '+15550109876' },
      content: { text: '{{ body }}' },
      variables: { body: 'y'.repeat(1700) },
    });
    assert.equal(tooLong.status, 201, JSON.stringify(tooLong.json));
    failedId = tooLong.json.notificationId;
    await settled(base, token, deliveredId, 'DELIVERED');
    await settled(base, token, failedId, 'FAILED');
    const failed = await apiCall(base, token, 'GET', `/api/notifications/${failedId}`);
    assert.match(JSON.stringify(failed.json.events), /more than the limit of 1600/);
  });
  after(async () => {
    await browser?.close();
    await herald?.close();
  });

  /** How much wider than its window the page is (0: no horizontal scrolling). */
  const overflow = (page: Page) =>
    page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

  it('wraps a 1,600-character SMS on the sandbox page instead of widening the page', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await logIn(page, base);
    await page.goto(`${base}/sandbox`);
    await page.locator('.bubble').first().waitFor();
    assert.equal(await overflow(page), 0);
    await page.close();
  });

  it('fits a 390 px wide phone on every page', async () => {
    const page = await browser.newPage({ viewport: PHONE });
    const watch = await watchPage(page);
    await logIn(page, base);
    // Each page and what shows that its data arrived (tables, charts, the message).
    const pages: Array<[string, string]> = [
      ['/', 'main .chart'],
      ['/send', 'main form'],
      ['/notifications', 'main td'],
      [`/notifications/${deliveredId}`, 'main .timeline li'],
      ['/templates', 'main h1'],
      ['/suppressions', 'main h1'],
      ['/recipients', 'main h1'],
      ['/categories', 'main form'],
      ['/sandbox', 'main .bubble'],
      ['/admin', 'main td'],
      ['/account', 'main h2'],
    ];
    for (const [path, loaded] of pages) {
      await page.goto(`${base}${path}`);
      await page.locator(loaded).first().waitFor();
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= PHONE.width, `${path} is ${width} px wide on a ${PHONE.width} px phone`);
    }
    assert.deepEqual(watch.cspViolations, []);
    await page.close();
  });

  it("shows a new client's secret with a copy button and a curl command that gets a token", async () => {
    const context = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
    const page = await context.newPage();
    await logIn(page, base);
    await page.goto(`${base}/admin`);
    await page.getByLabel('Name', { exact: true }).fill('billing backend');
    await page.getByRole('button', { name: 'Add client' }).click();
    const secret = await page.getByTestId('secret-value').textContent();
    assert.ok(secret && secret.length >= 40);
    await page.getByRole('button', { name: 'Copy the secret' }).click();
    await page.getByRole('button', { name: 'Copy the secret' }).getByText('Copied').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
    await page.getByRole('button', { name: 'Copy the curl command' }).click();
    const command = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(command, await page.getByTestId('token-command').textContent());
    assert.ok(command.includes(secret));
    // The command, pasted into a shell as it is, gets a token (run without blocking: the
    // gateway answering it runs in this process).
    const { stdout } = await promisify(execFile)('sh', ['-c', command], { encoding: 'utf8' });
    const answer = JSON.parse(stdout);
    assert.equal(answer.token_type, 'Bearer');
    assert.ok(answer.access_token);
    await context.close();
  });

  it('applies ?status=FAILED from the address bar, and keeps a chosen filter in it', async () => {
    const page = await browser.newPage();
    await logIn(page, base);
    await page.goto(`${base}/notifications?status=FAILED`);
    assert.equal(await page.getByLabel('Status').inputValue(), 'FAILED');
    await page.getByRole('link', { name: failedId }).waitFor();
    assert.equal(await page.getByRole('link', { name: deliveredId }).count(), 0);
    await page.getByLabel('Channel').selectOption('sms');
    await page.waitForURL(`${base}/notifications?status=FAILED&channel=sms`);
    await page.reload();
    assert.equal(await page.getByLabel('Channel').inputValue(), 'sms');
    await page.getByRole('link', { name: failedId }).waitFor();
    await page.close();
  });

  it('says which channels go to the sandbox', async () => {
    const page = await browser.newPage();
    await logIn(page, base);
    await page.goto(`${base}/sandbox`);
    const text = await page.getByTestId('sandbox-routing').textContent();
    assert.match(text ?? '', /Goes to the sandbox \(no provider configured\): email, sms, push\./);
    await page.close();
  });

  it('opens a valid template in the editor with its own sample variables, not in red', async () => {
    const created = await apiCall(base, token, 'POST', '/api/templates', {
      key: 'order-shipped',
      channel: 'sms',
      text: 'Order {{ order.id }} is on its way',
      sampleVariables: { order: { id: 'A-17' } },
    });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const page = await browser.newPage();
    await logIn(page, base);
    await page.goto(`${base}/templates`);
    await page.getByRole('button', { name: 'order-shipped' }).click();
    await page.locator('.bubble', { hasText: 'Order A-17 is on its way' }).waitFor();
    assert.equal(await page.locator('.card .problem').count(), 0);
    // Edited sample variables are saved with the next version.
    await page.getByLabel(/Sample variables/).fill('{"order": {"id": "B-2"}}');
    await page.locator('.bubble', { hasText: 'Order B-2 is on its way' }).waitFor();
    await page.getByRole('button', { name: 'Save new version' }).click();
    await page.getByText('Saved.').waitFor();
    const saved = await apiCall(base, token, 'GET', '/api/templates/order-shipped');
    assert.deepEqual(saved.json.sampleVariables, { order: { id: 'B-2' } });
    await page.close();
  });

  it('shows a notification scheduled for 2030 as scheduled, not as the oldest waiting', async () => {
    const later = await apiCall(base, token, 'POST', '/api/notifications', {
      channel: 'push',
      priority: 'LOW',
      recipient: { deviceToken: 'device-token-1234', platform: 'fcm' },
      content: { title: 'Happy new year', body: '2030' },
      scheduledAt: '2030-01-01T00:00:00Z',
    });
    assert.equal(later.status, 201);
    const page = await browser.newPage();
    await logIn(page, base);
    /** The value a bar chart shows for one row. */
    const bar = (chart: string, row: string) =>
      page
        .getByRole('img', { name: chart })
        .locator('g', { has: page.locator('text', { hasText: row }) })
        .locator('text.chart-value')
        .textContent();
    await eventually(
      async () => (await bar('Notifications scheduled for later (or backing off)', 'LOW push')) === '1',
      30_000,
      'the scheduled chart',
      200,
    );
    assert.equal(await bar('Notifications due now per priority and channel', 'LOW push'), '0');
    assert.equal(await bar('Age of the oldest notification due now', 'LOW push'), '0.0 s');
    await page.close();
  });

  it("shows admins the notification's rendered message", async () => {
    const page = await browser.newPage();
    await logIn(page, base);
    await page.goto(`${base}/notifications/${deliveredId}`);
    const message = page.getByTestId('rendered-message');
    await message.getByText('As the sandbox delivered it.').waitFor();
    assert.equal(await message.locator('.bubble').textContent(), 'x'.repeat(1600));
    // Not delivered by the sandbox: rendered from its content and variables.
    await page.goto(`${base}/notifications/${failedId}`);
    await message.getByText(/Rendered from its template version/).waitFor();
    assert.equal(await message.locator('.bubble').textContent(), 'y'.repeat(1700));
    await page.close();
  });

  it("shows the operator each tenant's quota with today's usage as a bar, and other tenants' admins none", async () => {
    const deps = (herald as Herald).deps;
    const set = await apiCall(base, token, 'PUT', '/api/admin/tenants/acme/quotas', {
      total: { perDay: 10 },
      channels: { sms: { ratePerSecond: 5, burst: 8 } },
    });
    assert.equal(set.status, 200, JSON.stringify(set.json));
    const acme = await tokenFor(deps, { role: 'sender', tenant: 'acme' });
    for (let i = 0; i < 3; i++) {
      const sent = await apiCall(base, acme, 'POST', '/api/notifications', {
        channel: 'sms',
        priority: 'CRITICAL',
        recipient: { phone: '+15550100000' },
        content: { text: 'Hi' },
      });
      assert.equal(sent.status, 201);
    }
    const page = await browser.newPage();
    const watch = await watchPage(page);
    await logIn(page, base);
    await page.goto(`${base}/admin`);
    const total = page.locator('tr[data-quota="acme total"]');
    await total.getByText('3 / 10 today').waitFor();
    const cells = async (row: typeof total) =>
      (await row.locator('td').allTextContents()).map((t) => t.trim());
    assert.deepEqual(await cells(total), ['acme', 'total', '-', '3 / 10 today']);
    const bar = total.getByRole('progressbar', { name: 'used today' });
    assert.deepEqual(await bar.evaluate((p: HTMLProgressElement) => [p.value, p.max]), [3, 10]);
    assert.deepEqual(await cells(page.locator('tr[data-quota="acme sms"]')), [
      'acme',
      'sms',
      '5/s (burst 8)',
      '3 today',
    ]);
    // A change shows without a reload (the table asks again every 5 s).
    const raised = await apiCall(base, token, 'PUT', '/api/admin/tenants/acme/quotas', {
      total: { perDay: 20 },
    });
    assert.equal(raised.status, 200);
    await total.getByText('3 / 20 today').waitFor();
    assert.equal(await page.locator('tr[data-quota="acme sms"]').count(), 0);
    assert.deepEqual(watch.errors, []);
    await page.close();

    // An admin of another tenant manages its own users, not every tenant's limits.
    const other = { email: 'admin@acme.example', password: 'correct horse battery staple' };
    await createUser(deps, { ...other, tenant: 'acme' });
    const theirs = await browser.newPage();
    await logIn(theirs, base, other);
    await theirs.goto(`${base}/admin`);
    await theirs.getByRole('heading', { name: 'Users' }).waitFor();
    assert.equal(await theirs.getByRole('heading', { name: 'Quotas' }).count(), 0);
    await theirs.close();
  });
});
