import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';

// The vendored bundles as the build wrote them (the test runner builds dist/ first), each loaded
// in a fresh process, since what Node has loaded cannot be unloaded.
const VENDOR = new URL('../../dist/vendor/', import.meta.url).href;
const INTERNAL_UNDICI = 'NativeModule internal/deps/undici/undici';

function run(script: string): string {
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
}

describe('vendored undici', () => {
  it("loads without Node's own copy of undici (the dispatch thread loads it for Web Push and callbacks)", () => {
    const loaded = run(`
      await import('${VENDOR}undici.js');
      process.stdout.write(JSON.stringify(process.moduleLoadList));
    `);
    assert.equal((JSON.parse(loaded) as string[]).includes(INTERNAL_UNDICI), false);
  });

  it("still reads cookies from its own Headers and from Node's", () => {
    const cookies = run(`
      const { getCookies, Headers } = await import('${VENDOR}undici.js');
      const own = getCookies(new Headers({ cookie: 'a=1' }));
      const global = getCookies(new globalThis.Headers({ cookie: 'b=2' }));
      process.stdout.write(JSON.stringify([own, global]));
    `);
    assert.deepEqual(JSON.parse(cookies), [{ a: '1' }, { b: '2' }]);
  });
});
