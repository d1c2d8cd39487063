// #49.5: `npm install` builds Herald through `prepare`; the build says what it is building, step
// by step, and .npmrc lets npm show install scripts' output (better-sqlite3's native build).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../helpers/config.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');

describe('the build', () => {
  it('prints a line before each step, in a copy of the sources', () => {
    // A copy: building here would remove dist/ under the tests running beside this one.
    const copy = tempDir('herald-build-');
    for (const name of [
      'src',
      'scripts',
      'native',
      'clients',
      'tsconfig.json',
      'tsconfig.build.json',
      'package.json',
    ]) {
      cpSync(join(ROOT, name), join(copy, name), { recursive: true });
    }
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
    const result = spawnSync(process.execPath, ['scripts/build.mjs', '--server'], {
      cwd: copy,
      encoding: 'utf8',
    });
    assert.equal(result.status, 0, result.stderr);
    const steps = result.stdout.split('\n').filter((line) => line.startsWith('herald build: '));
    assert.deepEqual(
      steps.map((line) => line.replace(/ \d+\.\d s$/, ' N s')),
      [
        'herald build: compiling the server (src/ to dist/ with tsc)…',
        'herald build: compiling the native memory helper (native/malloc-trim.c)…',
        "herald build: bundling the server's dependencies (dist/vendor/ with esbuild)…",
        'herald build: done in N s',
      ],
    );
  });

  it('has npm show install scripts’ output (.npmrc foreground-scripts)', () => {
    assert.match(readFileSync(join(ROOT, '.npmrc'), 'utf8'), /^foreground-scripts=true$/m);
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    assert.equal(scripts.prepare, 'npm run build');
  });
});
