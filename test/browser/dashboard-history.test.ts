// The dashboard's delivery history in Chromium (issue #49 item 12): delivered, failed and skipped
// per channel over the last hour and the last 7 days, with labelled time axes, read from
// GET /admin/history; and the throughput line on a time axis. At a phone's width too.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { Herald } from '../../src/main.ts';
import { apiCall } from '../helpers/api-call.ts';
import { adminToken, browserSkip, launchBrowser, logIn, settled, startStack } from '../helpers/browser.ts';
import { eventually } from '../helpers/eventually.ts';

const PHONE = { width: 390, height: 844 };
const hourChart = (channel: string) =>
  `${channel} in the last hour: delivered, failed and skipped per minute`;
const weekChart = (channel: string) =>
  `${channel} in the last 7 days: delivered, failed and skipped per hour`;

describe('dashboard delivery history in Chromium', { skip: browserSkip() }, () => {
  let herald: (Herald & { gatewayUrl: string }) | undefined;
  let browser: Browser;
  let base: string;
  let token: string;

  before(async () => {
    herald = await startStack({ HERALD_RENDER_TIMEOUT_MS: '10000' });
    base = herald.gatewayUrl;
    browser = await launchBrowser();
    token = await adminToken(browser, base);
    const send = async (body: object) => {
      const answer = await apiCall(base, token, 'POST', '/api/notifications', body);
      assert.equal(answer.status, 201, JSON.stringify(answer.json));
      return answer.json.notificationId as string;
    };
    const email = { channel: 'email', content: { subject: 'Hi', text: 'Hello' } };
    // Two emails delivered by the sandbox; an SMS longer than a provider takes (failed); an SMS
    // to a suppressed number (skipped).
    const delivered = [
      await send({ ...email, recipient: { email: 'ada@example.com' } }),
      await send({ ...email, recipient: { email: 'grace@example.com' } }),
    ];
    const failed = await send({
      channel: 'sms',
      recipient: { phone: '+15550109876' },
      content: { text: '{{ body }}' },
      variables: { body: 'y'.repeat(1700) },
    });
    const stop = await apiCall(base, token, 'POST', '/api/suppressions', {
      channel: 'sms',
      recipient: '+15550100001',
      reason: 'asked to stop',
    });
    assert.equal(stop.status, 201, JSON.stringify(stop.json));
    const skipped = await send({
      channel: 'sms',
      recipient: { phone: '+15550100001' },
      content: { text: 'Hi' },
    });
    for (const id of delivered) await settled(base, token, id, 'DELIVERED');
    await settled(base, token, failed, 'FAILED');
    await settled(base, token, skipped, 'FAILED');
  });
  after(async () => {
    await browser?.close();
    await herald?.close();
  });

  /** The sums of a column chart's columns, read from each column's title ("09:30: 2 delivered, …"). */
  async function totals(page: Page, chart: string): Promise<Record<string, number>> {
    const titles = await page.getByRole('img', { name: chart }).locator('g.column > title').allTextContents();
    const sums: Record<string, number> = { columns: titles.length, delivered: 0, failed: 0, skipped: 0 };
    for (const title of titles) {
      for (const [, n, name] of title.matchAll(/(\d+) (delivered|failed|skipped)/g))
        sums[name as string] = (sums[name as string] ?? 0) + Number(n);
    }
    return sums;
  }

  /** The labels under a chart's time axis, and its caption. */
  const axis = (page: Page, chart: string) =>
    page.getByRole('img', { name: chart }).locator('.time-axis text').allTextContents();

  it('charts delivered, failed and skipped per channel over the last hour and 7 days, on time axes', async () => {
    const page = await browser.newPage();
    await logIn(page, base);
    await page.goto(`${base}/`);
    await eventually(
      async () => (await totals(page, hourChart('sms'))).skipped === 1,
      30_000,
      'the last hour chart',
      250,
    );
    assert.deepEqual(await totals(page, hourChart('sms')), {
      columns: 60,
      delivered: 0,
      failed: 1,
      skipped: 1,
    });
    assert.deepEqual(await totals(page, hourChart('email')), {
      columns: 60,
      delivered: 2,
      failed: 0,
      skipped: 0,
    });
    assert.deepEqual(await totals(page, hourChart('push')), {
      columns: 60,
      delivered: 0,
      failed: 0,
      skipped: 0,
    });
    assert.deepEqual(await totals(page, weekChart('sms')), {
      columns: 168,
      delivered: 0,
      failed: 1,
      skipped: 1,
    });
    assert.deepEqual(await totals(page, weekChart('email')), {
      columns: 168,
      delivered: 2,
      failed: 0,
      skipped: 0,
    });

    // The last hour: a clock time every quarter of an hour, and what the axis measures.
    const hour = await axis(page, hourChart('email'));
    assert.equal(hour.at(-1), 'email: time (1 column a minute)');
    const clocks = hour.slice(0, -1);
    assert.ok(clocks.length >= 3 && clocks.length <= 4, `quarter-hour labels: ${clocks}`);
    for (const label of clocks) assert.match(label, /^\d{2}:\d{2}$/);
    // The 7 days: a day at each midnight.
    const week = await axis(page, weekChart('email'));
    assert.equal(week.at(-1), 'email: day (1 column an hour)');
    assert.ok(week.length - 1 >= 6 && week.length - 1 <= 7, `day labels: ${week}`);
    // The newest column is the minute in progress, labelled with its time.
    const newest = await page
      .getByRole('img', { name: hourChart('email') })
      .locator('g.column > title')
      .last()
      .textContent();
    assert.match(newest ?? '', /^\d{2}:\d{2}: \d+ delivered, \d+ failed, \d+ skipped$/);
    await page.close();
  });

  it('puts the throughput line on a time axis', async () => {
    const page = await browser.newPage();
    await logIn(page, base);
    await page.goto(`${base}/`);
    const chart = 'Accepted and delivered per second';
    // A sample is taken when the metrics change: some traffic while the page polls. Three samples
    // make two rates, and the axis then has its first, middle and last times.
    await eventually(
      async () => {
        await apiCall(base, token, 'POST', '/api/notifications', {
          channel: 'email',
          recipient: { email: 'ada@example.com' },
          content: { subject: 'Hi', text: 'Hello' },
        });
        return (await axis(page, chart)).length === 4;
      },
      60_000,
      'the time axis',
      500,
    );
    const labels = await axis(page, chart);
    assert.equal(labels.at(-1), 'time (sampled every poll)');
    for (const label of labels.slice(0, -1)) assert.match(label, /^\d{2}:\d{2}:\d{2}$/);
    await page.close();
  });

  it('fits the history charts on a 390 px wide phone', async () => {
    const page = await browser.newPage({ viewport: PHONE });
    await logIn(page, base);
    await page.goto(`${base}/`);
    await page.getByRole('img', { name: weekChart('push') }).waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= PHONE.width, `the dashboard is ${width} px wide`);
    const box = await page.getByRole('img', { name: hourChart('email') }).boundingBox();
    assert.ok(box && box.width <= PHONE.width && box.width > 300, `the chart is ${box?.width} px wide`);
    await page.close();
  });
});
