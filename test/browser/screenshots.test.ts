// #49.8: the README's screenshots come from the running UI, by one command (`npm run
// screenshots`, scripts/screenshots.ts): run it into a temporary directory and check that it
// takes every picture the README shows, the pages the issue names among them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { browserSkip } from '../helpers/browser.ts';
import { tempDir } from '../helpers/config.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const REQUIRED = [
  'dashboard',
  'notifications',
  'notification-detail',
  'templates',
  'suppressions',
  'account',
  'sandbox',
];

/** Width and height from a PNG's IHDR chunk. */
function pngSize(path: string): { width: number; height: number } {
  const bytes = readFileSync(path);
  assert.equal(bytes.subarray(1, 4).toString('latin1'), 'PNG', `${path} is a PNG`);
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

describe('npm run screenshots', { skip: browserSkip() }, () => {
  it('takes every screenshot the README shows from a fresh, seeded Herald', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const shown = [...readme.matchAll(/docs\/screenshots\/([a-z-]+)\.png/g)].map((m) => m[1] as string);
    for (const name of REQUIRED) assert.ok(shown.includes(name), `the README shows ${name}`);
    const out = tempDir('herald-shots-');
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    assert.equal(pkg.scripts.screenshots, 'node --import tsx scripts/screenshots.ts');
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/screenshots.ts', out], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 240_000,
    });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    for (const name of shown) {
      const path = join(out, `${name}.png`);
      assert.ok(existsSync(path), `${name}.png taken`);
      assert.deepEqual(pngSize(path), { width: 1280, height: 800 }, name);
    }
  });
});
