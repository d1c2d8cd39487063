// The package as users install it: `npm pack`, then `npm install --omit=dev` of the tarball in an
// empty project (no build step, no build tools), then `herald start` from node_modules/.bin.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { type HeraldProcess, startHeraldProcess } from '../helpers/herald-process.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const npm = (args: string[], cwd: string) =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

describe('the npm package', () => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-pack-'));
  let herald: HeraldProcess | undefined;
  let files: string[] = [];

  before(async () => {
    // dist/ is compiled by the test runner and web/dist/ by `npm install` (prepare).
    assert.ok(existsSync(join(ROOT, 'web', 'dist', 'index.html')), 'web/dist is built');
    const packed = JSON.parse(
      npm(['pack', '--json', '--ignore-scripts', '--pack-destination', dir], ROOT),
    ) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    const tarball = packed[0];
    assert.ok(tarball);
    files = tarball.files.map((f) => f.path);
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({
        name: 'herald-install-test',
        private: true,
        allowScripts: { 'better-sqlite3': true },
      }),
    );
    // better-sqlite3's install script fetches its prebuilt binary from GitHub, which this machine
    // cannot reach, and falls back to compiling SQLite from source: 90 s of CPU, on every Node of
    // CI, testing better-sqlite3's build rather than Herald's package. The install runs without
    // scripts and the binary this checkout runs with (built for this Node) takes the download's
    // place; Herald's package itself has no install script.
    npm(
      [
        'install',
        '--omit=dev',
        '--ignore-scripts',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        `./${tarball.filename}`,
      ],
      dir,
    );
    const addon = join('node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
    cpSync(join(ROOT, addon), join(dir, addon));
  });

  after(async () => {
    await herald?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('holds the compiled server, the built UI and no sources or tests', () => {
    assert.ok(files.includes('dist/cli/run.js'));
    assert.ok(files.includes('dist/store/sqlite/migrations/001_notifications.sql'));
    assert.ok(files.includes('web/dist/index.html'));
    // The native helper, compiled by the build on Linux (src/memory-trim.ts).
    if (process.platform === 'linux') assert.ok(files.includes('dist/native/malloc-trim.node'));
    assert.deepEqual(
      files.filter((f) => /^(src|test|bench|scripts)\//.test(f) || f.endsWith('.ts')),
      [],
    );
  });

  test('installs without build tools or types', () => {
    const installed = readdirSync(join(dir, 'node_modules'));
    for (const tool of ['typescript', 'tsx', 'vite', 'esbuild', 'react', '@types', '@biomejs']) {
      assert.ok(!installed.includes(tool), `${tool} was installed`);
    }
  });

  test('`herald start` from the installed package serves the API, its document and the UI', async () => {
    herald = await startHeraldProcess(
      'installed herald',
      {
        HERALD_DATA_DIR: join(dir, 'data'),
        HERALD_HOST: '127.0.0.1',
        HERALD_API_PORT: '0',
        HERALD_GATEWAY_PORT: '0',
        LOG_LEVEL: 'warn',
      },
      60_000,
      join(dir, 'node_modules', 'herald', 'bin', 'herald.js'),
    );
    assert.equal((await fetch(`${herald.apiUrl}/health`)).status, 200);
    const doc = (await (await fetch(`${herald.apiUrl}/docs/json`)).json()) as { openapi: string };
    assert.equal(doc.openapi, '3.1.0');
    const page = await fetch(`${herald.gatewayUrl}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<div id="root">/);
    // Once it runs, it has given start-up's C memory back through the shipped helper, which
    // it loads for that alone (src/memory-trim.ts).
    if (process.platform === 'linux') {
      const running = herald;
      await eventually(
        () => readFileSync(`/proc/${running.pid}/maps`, 'utf8').includes('malloc-trim.node'),
        10_000,
        'herald start to load dist/native/malloc-trim.node',
      );
    }
  });
});
