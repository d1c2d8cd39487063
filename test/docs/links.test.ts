// #49.7: the README and docs/ cite only what this repository holds: every relative link names a
// file that exists, and no text sends the reader to API.md or ARCHITECTURE.md, which are not
// here (the API is described by its OpenAPI document, `/docs` or `herald openapi`; the code's
// layout by docs/architecture.md).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..');
const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'), { recursive: true })
    .map(String)
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name)),
];

describe('the documentation cites what the repository holds', () => {
  it('names no file that is not in it', () => {
    const found = FILES.flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .map((line, i) => ({ where: `${file}:${i + 1}`, line }))
        .filter(({ line }) => /\b(API|ARCHITECTURE)\.md\b/.test(line))
        .map(({ where }) => where),
    );
    assert.deepEqual(found, []);
  });

  it('links only to files that exist', () => {
    const broken: string[] = [];
    for (const file of FILES) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (!target || /^[a-z]+:/i.test(target) || target.startsWith('#')) continue;
        const path = target.split('#')[0] ?? '';
        if (!existsSync(join(ROOT, dirname(file), path))) broken.push(`${file}: ${target}`);
      }
    }
    assert.deepEqual(broken, []);
  });
});
