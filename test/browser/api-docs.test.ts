// #49.9: the OpenAPI docs page through the gateway, the port that faces users. `/api/docs` was a
// blank page: its HTML named its assets `/docs/static/…` from the root, which the gateway answers
// 404 (it forwards only `/api/…`). Chromium loads the page and must list the operations.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserSkip, launchBrowser, startStack, watchPage } from '../helpers/browser.ts';

describe('the OpenAPI docs through the gateway', { skip: browserSkip() }, () => {
  let herald: Awaited<ReturnType<typeof startStack>>;
  let browser: Browser;

  before(async () => {
    herald = await startStack();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await herald?.close();
  });

  it('lists every operation at /api/docs, with no asset missing', async () => {
    const page = await browser.newPage();
    const watch = await watchPage(page);
    const failed: string[] = [];
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(`${herald.gatewayUrl}/api/docs`);
    await page.locator('.opblock').first().waitFor();
    const doc = (await (await fetch(`${herald.apiUrl}/docs/json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.values(doc.paths).reduce((n, path) => n + Object.keys(path).length, 0);
    assert.equal(await page.locator('.opblock').count(), operations);
    const send = page.locator('.opblock-post', { has: page.locator('[data-path="/notifications"]') });
    assert.equal(await send.count(), 1, 'POST /notifications is listed');
    assert.deepEqual(failed, []);
    assert.deepEqual(watch.cspViolations, []);
    await page.close();
  });
});
