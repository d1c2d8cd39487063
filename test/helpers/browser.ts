import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import type { Env } from '../../src/config/read.ts';
import { type Herald, startHerald } from '../../src/main.ts';
import { apiCall } from './api-call.ts';
import { testConfig } from './config.ts';
import { eventually } from './eventually.ts';

/**
 * Debian's chromium (`apt-get install chromium`); playwright cannot download its own browser
 * here. CHROMIUM_PATH overrides it (e.g. to check the skip path).
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * `false` when the browser tests can run, else the reason they are skipped, for
 * `describe(name, { skip: browserSkip() }, ...)`. Without chromium they are skipped with a loud
 * banner, except in CI (CI=true), where a missing browser fails the file: CI must run them.
 */
export function browserSkip(): string | false {
  if (existsSync(CHROMIUM)) return false;
  if (process.env.CI === 'true')
    throw new Error(`CI=true but ${CHROMIUM} is missing: the browser tests must run in CI`);
  const banner = '!'.repeat(78);
  console.log(
    `\n${banner}\n!!! SKIPPED: browser tests: ${CHROMIUM} not found (apt-get install chromium)\n${banner}\n`,
  );
  return `SKIPPED: ${CHROMIUM} not found`;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

const WEB = join(import.meta.dirname, '..', '..', 'web');

function newestMtime(dir: string): number {
  return Math.max(
    0,
    ...readdirSync(dir).map((name) => {
      const path = join(dir, name);
      const stat = statSync(path);
      return stat.isDirectory() ? newestMtime(path) : stat.mtimeMs;
    }),
  );
}

/** Whether `built` is missing or older than `sources`' newest file. */
function stale(built: string, sources: number): boolean {
  return !existsSync(built) || statSync(built).mtimeMs < sources;
}

/**
 * Builds the UI and /inbox.js when web/dist lacks them or they are older than their sources
 * (install builds them; edits may not). The element after the UI: Vite empties web/dist.
 */
export function ensureWebBuild(): void {
  const build = (args: string[], what: string) => {
    const result = spawnSync(process.execPath, args, { cwd: join(WEB, '..'), stdio: 'inherit' });
    if (result.status !== 0) throw new Error(`${what} failed`);
  };
  const ui = Math.max(newestMtime(join(WEB, 'src')), statSync(join(WEB, 'index.html')).mtimeMs);
  if (stale(join(WEB, 'dist', 'index.html'), ui))
    build(['node_modules/vite/bin/vite.js', 'build', '--config', 'web/vite.config.ts'], 'vite build');
  if (stale(join(WEB, 'dist', 'inbox.js'), newestMtime(join(WEB, 'inbox'))))
    build(['web/inbox/build.mjs'], 'the inbox.js build');
}

export const ADMIN = { email: 'admin@example.com', password: 'correct horse battery staple' };

/** Herald with every role (sandbox delivery, gateway on a random port) and a bootstrap admin. */
export async function startStack(env: Env = {}): Promise<Herald & { gatewayUrl: string }> {
  ensureWebBuild();
  const herald = await startHerald(
    testConfig({ HERALD_ADMIN_EMAIL: ADMIN.email, HERALD_ADMIN_PASSWORD: ADMIN.password, ...env }),
  );
  if (!herald.gatewayUrl) throw new Error('the gateway did not start');
  return herald as Herald & { gatewayUrl: string };
}

/** What the page reported: console errors, CSP violations (by the DOM event) and uncaught errors. */
export interface PageWatch {
  errors: string[];
  cspViolations: string[];
  urls: string[];
}

/** Records console errors, CSP violations and every requested URL of a page. */
export async function watchPage(page: Page): Promise<PageWatch> {
  const watch: PageWatch = { errors: [], cspViolations: [], urls: [] };
  page.on('console', (message) => {
    if (message.type() === 'error') watch.errors.push(message.text());
    if (/Content Security Policy/i.test(message.text())) watch.cspViolations.push(message.text());
  });
  page.on('pageerror', (error) => watch.errors.push(String(error)));
  page.on('request', (request) => watch.urls.push(request.url()));
  await page.exposeFunction('__heraldCsp', (text: string) => watch.cspViolations.push(text));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      const report = (window as unknown as { __heraldCsp: (t: string) => void }).__heraldCsp;
      report(`${event.violatedDirective} blocked ${event.blockedURI}`);
    });
  });
  return watch;
}

/** Signs in through the login form. */
export async function logIn(page: Page, base: string, who = ADMIN): Promise<void> {
  await page.goto(`${base}/login`);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${base}/`);
}

/** The status the gateway answers for a refresh with `refreshToken` (200, or 401 once ended). */
export async function refreshStatus(base: string, refreshToken: string): Promise<number> {
  const response = await fetch(`${base}/api/session/refresh`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ refresh_token: refreshToken }),
  });
  await response.body?.cancel();
  return response.status;
}

/** The session the UI keeps in localStorage. */
export function storedSession(page: Page): Promise<{ accessToken: string; refreshToken: string } | null> {
  return page.evaluate(() => JSON.parse(localStorage.getItem('herald.session') ?? 'null'));
}

/** An admin's access token, from a sign-in through the login form in a page of its own. */
export async function adminToken(browser: Browser, base: string): Promise<string> {
  const page = await browser.newPage();
  try {
    await logIn(page, base);
    return (await storedSession(page))?.accessToken ?? '';
  } finally {
    await page.close();
  }
}

/** Waits until notification `id` reaches `status` (read through the gateway's API). */
export function settled(base: string, token: string, id: string, status: string): Promise<void> {
  return eventually(
    async () => (await apiCall(base, token, 'GET', `/api/notifications/${id}`)).json?.status === status,
    60_000,
    `${id} ${status}`,
    50,
  );
}
