import { createRequire } from 'node:module';

interface Helper {
  trim(): boolean | undefined;
}

/**
 * Gives the C heap's free pages back to the operating system: glibc's `malloc_trim(0)`, through
 * native/malloc-trim.c, compiled into dist/native/ by `npm run build`. Start-up frees megabytes
 * of C memory (V8 parses and compiles every module in malloc'd zones, in several threads), and
 * glibc keeps the pages of what was freed between live blocks in its arenas: Herald held about
 * 6 MB less RSS once they were given back (docs/decisions/0005-idle-memory.md). Takes about 1 ms.
 *
 * True when memory was given back, false when there was none to give; undefined without the
 * helper (not Linux, not glibc, no C compiler at build time, or running src/ through tsx).
 */
export function trimMemory(): boolean | undefined {
  let helper: Helper;
  try {
    helper = createRequire(import.meta.url)('./native/malloc-trim.node') as Helper;
  } catch {
    return undefined;
  }
  return helper.trim();
}
