import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';

// The native helper as the build wrote it (the test runner builds dist/ first), in a fresh
// process whose C heap the test fragments itself. Linux with glibc is where the helper exists
// (CI's and the developers' machines), so there it must have been built.
const TRIM = new URL('../../dist/memory-trim.js', import.meta.url).href;
const ADDON = new URL('../../dist/native/malloc-trim.node', import.meta.url);
const glibc =
  process.platform === 'linux' &&
  Boolean(
    (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime,
  );

describe('giving freed C memory back (dist/native/malloc-trim.node)', { skip: !glibc && 'not glibc' }, () => {
  it('is built', () => {
    assert.ok(existsSync(ADDON), 'npm run build compiled native/malloc-trim.c');
  });

  it('returns the free pages between live blocks to the system', () => {
    // 160 MB of 8 KB ArrayBuffers (malloc'd, under glibc's mmap threshold), then every one but
    // each 16th is dropped and collected: the freed pages sit between live blocks, where glibc
    // keeps them until malloc_trim. RSS from /proc, in MB, before and after the trim.
    const out = execFileSync(
      process.execPath,
      [
        '--expose-gc',
        '--input-type=module',
        '-e',
        `
        import { readFileSync } from 'node:fs';
        const { trimMemory } = await import('${TRIM}');
        const rss = () => Number(readFileSync('/proc/self/statm', 'utf8').split(' ')[1]) * 4096 / 1e6;
        let buffers = Array.from({ length: 20000 }, () => new Uint8Array(8192).fill(1));
        const kept = buffers.filter((_, i) => i % 16 === 0);
        buffers = undefined;
        globalThis.gc();
        await new Promise((resolve) => setTimeout(resolve, 50));
        globalThis.gc();
        const before = rss();
        const trimmed = trimMemory();
        process.stdout.write(JSON.stringify({ trimmed, before, after: rss(), kept: kept.length }));
        `,
      ],
      { encoding: 'utf8' },
    );
    const { trimmed, before, after } = JSON.parse(out) as { trimmed: boolean; before: number; after: number };
    assert.equal(trimmed, true);
    // About 150 MB were freed; most of it must leave the process.
    assert.ok(
      before - after > 75,
      `RSS ${before.toFixed(1)} MB before the trim, ${after.toFixed(1)} MB after`,
    );
  });
});
