// #52: the workflows and workflow runs pages in Chromium (one Herald on SQLite, one browser).
// A workflow made in the editor: text that is not JSON and a 400 shown at their step and line,
// fixed, its diagram drawn; a trigger that refuses an unknown recipient and links to its run;
// the run's timeline with the send step's link to its notification; cancel; delete.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Herald } from '../../src/main.ts';
import { apiCall } from '../helpers/api-call.ts';
import { adminToken, browserSkip, launchBrowser, logIn, startStack, watchPage } from '../helpers/browser.ts';

/** Line 5 holds step 1, the delay; its `for` is refused first, then fixed. */
const definition = (delay: string) => `{
  "name": "Welcome",
  "steps": [
    { "type": "send", "channel": "email", "content": { "subject": "Hi {{ name }}", "text": "Welcome" } },
    { "type": "delay", "for": "${delay}" },
    { "type": "send", "channel": "sms", "content": { "text": "Hello again" }, "if": "failed" }
  ]
}`;

describe('web UI workflows and runs pages in Chromium', { skip: browserSkip() }, () => {
  let herald: (Herald & { gatewayUrl: string }) | undefined;
  let browser: Browser;
  let base: string;
  let page: Page;
  let watch: Awaited<ReturnType<typeof watchPage>>;

  before(async () => {
    herald = await startStack({ HERALD_POLL_MS: '50' });
    base = herald.gatewayUrl;
    browser = await launchBrowser();
    await herald.deps.store.recipients.put(
      'default',
      [{ id: 'ada', profile: { email: 'ada@example.com', phone: '+15550100001' } }],
      Date.now(),
    );
    page = await browser.newPage();
    watch = await watchPage(page);
    await logIn(page, base);
  });
  after(async () => {
    await browser?.close();
    await herald?.close();
  });

  it('shows text that is not JSON and a 400 at their step and line, then saves and draws the fix', async () => {
    await page.getByRole('link', { name: 'Workflows' }).click();
    await page.waitForURL(`${base}/workflows`);
    await page.getByRole('button', { name: 'New workflow' }).click();
    await page.getByLabel('Key').fill('welcome');
    const editor = page.getByLabel('Definition');

    // Not JSON: refused in the browser, marked at the line where it breaks.
    await editor.fill('{\n  "name": "Welcome",\n  "steps": [,]\n}');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('The definition is not JSON').waitFor();
    await page.locator('.gutter-line.has-error[data-line="3"]').waitFor();

    // The server's 400: step 1's `for`, on its box in the diagram and on line 5 of the text.
    await editor.fill(definition('P1Y'));
    await page.getByRole('button', { name: 'Save' }).click();
    const error = page.locator('[data-error-path="body/steps/1/for"]');
    await error.waitFor();
    assert.match((await error.textContent()) ?? '', /^line 5 step 1, for must be an ISO 8601 duration/);
    await page.locator('.diagram-step.has-error[data-step="1"]', { hasText: 'for: must be' }).waitFor();
    assert.equal(await page.locator('.diagram-step.has-error').count(), 1, 'only step 1 is marked');
    assert.deepEqual(
      await page.locator('.gutter-line.has-error').evaluateAll((l) => l.map((e) => e.textContent)),
      ['5'],
    );
    // "line 5" selects that line of the text.
    await error.getByRole('button', { name: 'line 5' }).click();
    const selected = await editor.evaluate((e: HTMLTextAreaElement) =>
      e.value.slice(e.selectionStart, e.selectionEnd),
    );
    assert.equal(selected, '    { "type": "delay", "for": "P1Y" },');
    assert.equal(await herald?.deps.store.workflows.get('default', 'welcome'), null, 'nothing stored');

    // Fixed: saved as version 1, listed, drawn without errors.
    await editor.fill(definition('PT1S'));
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(`${base}/workflows?key=welcome`);
    await page.locator('tr[data-workflow="welcome"] td.version', { hasText: '1' }).waitFor();
    await page.locator('.saved-version', { hasText: 'Version 1' }).waitFor();
    assert.equal(await page.locator('.diagram-step').count(), 3);
    assert.equal(await page.locator('.diagram-arrow').count(), 2);
    assert.equal(await page.locator('.has-error').count(), 0);
    assert.match(
      (await page.locator('.diagram-step[data-step="0"]').textContent()) ?? '',
      /send[\s\S]*email · inline content/,
    );
    assert.match(
      (await page.locator('.diagram-step[data-step="1"]').textContent()) ?? '',
      /delay[\s\S]*wait PT1S \(1 s\)/,
    );
    assert.match((await page.locator('.diagram-step[data-step="2"]').textContent()) ?? '', /only if failed/);
    assert.equal((await herald?.deps.store.workflows.get('default', 'welcome'))?.version, 1);
  });

  it('triggers it, names the refused recipient, and follows the run to its notification', async () => {
    await page.goto(`${base}/workflows?key=welcome`);
    await page.getByLabel('Recipient IDs').fill('ada, ghost');
    await page.getByLabel('Variables (JSON)').fill('{ "name": "Ada" }');
    await page.getByRole('button', { name: 'Trigger', exact: true }).click();
    await page.getByText('Refused (no such recipient): ghost.').waitFor();
    await page.locator('.trigger-result').getByRole('link', { name: /^run / }).click();
    await page.waitForURL(/\/workflow-runs\/[^/?]+$/);

    // The timeline: the email sent, the delay done, the `if: failed` send skipped.
    await page.locator('[data-testid="run-status"]', { hasText: 'COMPLETED' }).waitFor({ timeout: 20_000 });
    const step = (i: number) => page.locator(`.run-steps li[data-step="${i}"]`);
    assert.match((await step(0).textContent()) ?? '', /0 send[\s\S]*DONE/);
    assert.match((await step(1).textContent()) ?? '', /1 delay[\s\S]*DONE/);
    assert.match((await step(2).textContent()) ?? '', /2 send[\s\S]*SKIPPED/);
    assert.equal(await page.getByRole('button', { name: 'Cancel the run' }).count(), 0, 'an ended run');
    const link = step(0).getByRole('link', { name: /^notification / });
    const notificationId = ((await link.textContent()) ?? '').replace('notification ', '');
    await link.click();
    await page.waitForURL(`${base}/notifications/${notificationId}`);
    await page.getByRole('heading', { name: 'Notification' }).waitFor();
    await page.locator('.facts dd', { hasText: 'recipient ada' }).waitFor();

    // The list, filtered by workflow and status (kept in the address bar).
    await page.goto(`${base}/workflow-runs?workflow=welcome&status=COMPLETED`);
    await page.locator('tr[data-run] [data-testid="run-status"]', { hasText: 'COMPLETED' }).waitFor();
    assert.equal(await page.locator('tr[data-run]').count(), 1);
    await page.getByLabel('Status').selectOption('WAITING');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(`${base}/workflow-runs?workflow=welcome&status=WAITING`);
    await page.getByText('No runs.').waitFor();
    assert.deepEqual(watch.cspViolations, []);
  });

  it('cancels a waiting run, and deletes a workflow after asking', async () => {
    const token = await adminToken(browser, base);
    const put = await apiCall(base, token, 'PUT', '/api/workflows/slow', {
      steps: [{ type: 'delay', for: 'P1D' }],
    });
    assert.equal(put.status, 201);
    const trigger = await apiCall(base, token, 'POST', '/api/workflows/slow/trigger', {
      recipients: ['ada'],
    });
    const runId = trigger.json.runs[0].runId as string;
    await page.goto(`${base}/workflow-runs/${runId}`);
    await page.locator('[data-testid="run-status"]', { hasText: 'WAITING' }).waitFor({ timeout: 20_000 });
    await page.locator('.run-steps li[data-step="0"]', { hasText: 'until' }).waitFor();
    await page.getByRole('button', { name: 'Cancel the run' }).click();
    await page.locator('[data-testid="run-status"]', { hasText: 'CANCELLED' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Cancel the run' }).count(), 0);

    await page.getByRole('link', { name: 'slow' }).click();
    await page.waitForURL(`${base}/workflows?key=slow`);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Delete workflow slow?').waitFor();
    assert.ok(await herald?.deps.store.workflows.get('default', 'slow'), 'asking deletes nothing');
    await page.getByRole('button', { name: 'Yes, delete slow' }).click();
    await page.waitForURL(`${base}/workflows`);
    await page.locator('tr[data-workflow="welcome"]').waitFor();
    await page.locator('tr[data-workflow="slow"]').waitFor({ state: 'detached' });
    assert.equal(await herald?.deps.store.workflows.get('default', 'slow'), null);
    assert.deepEqual(watch.cspViolations, []);
    assert.deepEqual(
      watch.errors.filter((e) => !/status of 4\d\d/.test(e)),
      [],
    );
  });

  it('fits a 390 px wide phone: the editor, its diagram, the runs and a run', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [path, loaded] of [
      ['/workflows?key=welcome', '.diagram-step'],
      ['/workflow-runs?workflow=welcome', 'tr[data-run]'],
    ] as const) {
      await page.goto(`${base}${path}`);
      await page.locator(loaded).first().waitFor();
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 390, `${path} is ${width} px wide on a 390 px phone`);
    }
    await page.locator('tr[data-run] a').first().click();
    await page.locator('.run-steps li').first().waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `a run is ${width} px wide on a 390 px phone`);
  });
});
