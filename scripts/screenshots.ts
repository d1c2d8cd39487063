// Takes the README's screenshots of the web UI into docs/screenshots/, from a fresh Herald (every
// role, a temporary data directory, random ports) seeded with sample data, in Chromium
// (/usr/bin/chromium, or CHROMIUM_PATH). One command, so they follow the UI as it changes:
//   npm run screenshots                 (or: node --import tsx scripts/screenshots.ts [out-dir])
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { ADMIN, launchBrowser, logIn, startStack } from '../test/helpers/browser.ts';
import { startIdp } from '../test/helpers/oidc.ts';

/** The pages the README shows, and the others docs/web-ui.md may use; each becomes `<name>.png`. */
const SHOTS = [
  'login',
  'dashboard',
  'dashboard-history',
  'send-errors',
  'notifications',
  'notification-detail',
  'templates',
  'sandbox',
  'suppressions',
  'account',
  'admin',
  'workflows',
] as const;

const OUT = resolve(process.argv[2] ?? join(import.meta.dirname, '..', 'docs', 'screenshots'));

async function api(base: string, token: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${base}/api${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return response.json();
}

async function shot(page: Page, name: (typeof SHOTS)[number]) {
  await page.waitForTimeout(400);
  await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: false });
  console.log(join(OUT, `${name}.png`));
}

mkdirSync(OUT, { recursive: true });
// An OpenID provider too, so the sign-in page shows its single sign-on button.
const idp = await startIdp();
const herald = await startStack({
  HERALD_OIDC_ISSUER: idp.issuer,
  HERALD_OIDC_CLIENT_ID: idp.clientId,
  HERALD_OIDC_CLIENT_SECRET: idp.clientSecret,
});
const base = herald.gatewayUrl;
idp.configure(`${base}/oidc/callback`);
const login = await (
  await fetch(`${base}/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  })
).json();
const token = login.access_token as string;

await api(base, token, 'POST', '/templates', {
  key: 'welcome',
  channel: 'email',
  subject: 'Welcome to Acme, {{ name }}',
  text: 'Hi {{ name }}, your account is ready.',
  html: '<div style="font-family:sans-serif;max-width:480px"><h2 style="color:#3454d1">Welcome, {{ name }}!</h2><p>Your Acme account is ready. <a href="{{ link }}">Sign in</a> to get started.</p><p style="color:#888;font-size:12px">You get this email because you signed up.</p></div>',
});
await api(base, token, 'POST', '/templates', {
  key: 'otp',
  channel: 'sms',
  text: 'Your Acme code is {{ code }}',
});
await api(base, token, 'POST', '/admin/users', {
  email: 'ops@example.com',
  password: 'a long password 1',
  role: 'sender',
});
await api(base, token, 'POST', '/admin/clients', { name: 'billing-service', scopes: ['notifications:send'] });
await api(base, token, 'POST', '/admin/queues/pause', { priority: 'LOW' });
await api(base, token, 'POST', '/suppressions', {
  channel: 'email',
  recipient: 'bounced@example.com',
  reason: 'asked by phone to stop',
});
await api(base, token, 'POST', '/suppressions', { channel: 'sms', recipient: '+15550009999' });
// To the suppressed number: skipped, in the dashboard's delivery history.
await api(base, token, 'POST', '/notifications', {
  channel: 'sms',
  recipient: { phone: '+15550009999' },
  content: { text: 'Your code is 424242' },
});
const people = ['ada', 'grace', 'alan', 'edsger', 'barbara', 'donald'];
for (const [i, name] of people.entries()) {
  await api(base, token, 'POST', '/notifications', {
    channel: 'email',
    priority: i === 0 ? 'CRITICAL' : 'HIGH',
    recipient: { email: `${name}@example.com` },
    template: 'welcome',
    variables: { name: name[0]?.toUpperCase() + name.slice(1), link: 'https://acme.example/login' },
  });
  await api(base, token, 'POST', '/notifications', {
    channel: 'sms',
    priority: 'NORMAL',
    recipient: { phone: `+1555000${1000 + i}` },
    template: 'otp',
    variables: { code: String(100000 + i * 7919) },
  });
}
await api(base, token, 'POST', '/notifications', {
  channel: 'push',
  priority: 'HIGH',
  recipient: { deviceToken: 'fcm-device-token-0123456789abcdef', platform: 'fcm' },
  content: { title: 'Order shipped', body: 'Your order #1042 is on its way.' },
});
for (let i = 0; i < 40; i++) {
  await api(base, token, 'POST', '/notifications', {
    channel: i % 3 === 0 ? 'sms' : 'email',
    priority: 'LOW',
    recipient: i % 3 === 0 ? { phone: `+1555100${1000 + i}` } : { email: `user${i}@example.com` },
    content: i % 3 === 0 ? { text: 'Weekly digest' } : { subject: 'Weekly digest', text: 'News' },
  });
}

const browser = await launchBrowser();
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
await page.goto(`${base}/login`);
await page.getByLabel('Email').fill(ADMIN.email);
await page.getByRole('button', { name: 'Sign in with single sign-on' }).waitFor();
await shot(page, 'login');
await logIn(page, base);
// Some traffic while the dashboard polls, so the throughput chart has a shape.
const traffic = (async () => {
  for (let i = 0; i < 30; i++) {
    await api(base, token, 'POST', '/notifications', {
      channel: 'email',
      priority: i % 4 === 0 ? 'CRITICAL' : 'NORMAL',
      recipient: { email: `load${i}@example.com` },
      content: { subject: 'Hi', text: 'Hello' },
    });
    await new Promise((r) => setTimeout(r, 250));
  }
})();
await page.waitForTimeout(9000);
await traffic;
await shot(page, 'dashboard');
// The delivery history, below the queues.
await page.getByTestId('history-1h').scrollIntoViewIfNeeded();
await shot(page, 'dashboard-history');

await page.getByRole('link', { name: 'Send' }).click();
await page.getByLabel('Recipient email').fill('not-an-email');
await page.getByLabel('Subject').fill('Hello {{ name }}');
await page.getByRole('button', { name: 'Send' }).click();
await page.getByRole('alert').waitFor();
await shot(page, 'send-errors');

await page.getByRole('link', { name: 'Notifications' }).click();
await page.locator('tbody tr').first().waitFor();
await shot(page, 'notifications');
await page.locator('tbody tr a').nth(3).click();
await page.locator('.timeline li').first().waitFor();
await shot(page, 'notification-detail');

await page.getByRole('link', { name: 'Templates' }).click();
await page.getByRole('button', { name: 'welcome' }).click();
await page.getByLabel(/Sample variables/).fill('{"name": "Ada", "link": "https://acme.example/login"}');
await page.waitForTimeout(600);
await shot(page, 'templates');

await api(base, token, 'POST', '/notifications', {
  channel: 'email',
  priority: 'HIGH',
  recipient: { email: 'grace@example.com' },
  template: 'welcome',
  variables: { name: 'Grace', link: 'https://acme.example/login' },
});
await page.getByRole('link', { name: 'Sandbox' }).click();
await page
  .getByRole('button', { name: /Welcome to Acme, Grace/ })
  .first()
  .click();
await page.locator('iframe.email-frame').waitFor();
await shot(page, 'sandbox');

await page.getByRole('link', { name: 'Suppressions' }).click();
await page.getByText('asked by phone to stop').first().waitFor();
await shot(page, 'suppressions');

await page.getByRole('link', { name: 'Account' }).click();
await page.getByRole('heading', { name: 'Change password' }).waitFor();
await shot(page, 'account');

await page.getByRole('link', { name: 'Admin' }).click();
await page.getByRole('cell', { name: 'ops@example.com' }).waitFor();
await shot(page, 'admin');

// A workflow with a 400 shown at its step: the editor's line and the diagram's box.
await api(base, token, 'PUT', '/workflows/onboarding', {
  name: 'Onboarding',
  steps: [
    { type: 'send', channel: 'email', template: 'welcome' },
    { type: 'delay', for: 'P1D' },
    { type: 'send', channel: 'sms', template: 'otp', if: 'not_delivered' },
    { type: 'throttle', limit: 3, for: 'PT1H' },
  ],
});
await page.getByRole('link', { name: 'Workflows' }).click();
await page.getByRole('link', { name: 'onboarding' }).click();
const definition = page.getByLabel('Definition');
await definition.fill((await definition.inputValue()).replace('"P1D"', '"P2M"'));
await page.getByRole('button', { name: 'Save' }).click();
await page.locator('.diagram-step.has-error').waitFor();
await shot(page, 'workflows');

await browser.close();
await herald.close();
await idp.close();
