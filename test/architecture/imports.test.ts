// Layers that point one way (docs/architecture.md, "Dependencies point one way"): no import
// circle in src/, and the leaves import nothing but leaves.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import madge from 'madge';

const graph = await madge('src', {
  fileExtensions: ['ts'],
  tsConfig: 'tsconfig.json',
  // Type-only imports count: a circle of types is still a circle to read.
  detectiveOptions: { ts: { skipTypeImports: false }, tsx: { skipTypeImports: false } },
});
const imports = graph.obj();

/** Files under `folder` (or the file itself) that import something outside `allowed`. */
function strays(from: (file: string) => boolean, allowed: (target: string) => boolean): string[] {
  return Object.entries(imports).flatMap(([file, targets]) =>
    from(file) ? targets.filter((t) => !allowed(t)).map((t) => `${file} -> ${t}`) : [],
  );
}

/** Modules that import nothing of Herald's: anything may import them. */
const LEAVES = [
  'errors.ts',
  'clock.ts',
  'channels.ts',
  'safe-equal.ts',
  'version.ts',
  'ipv6.ts',
  'auth/principal.ts',
  'auth/password-rules.ts',
  'reserve.ts',
  'templates/limits.ts',
];
const isLeaf = (file: string) => LEAVES.includes(file);

describe('src/ imports', () => {
  it('have no circle', () => {
    for (const leaf of LEAVES) assert.deepEqual(imports[leaf], [], `${leaf} is a leaf`);
    assert.deepEqual(graph.circular(), []);
  });

  it('keep config/ a leaf: it imports only itself and the leaves', () => {
    assert.deepEqual(
      strays(
        (f) => f.startsWith('config/'),
        (t) => t.startsWith('config/') || isLeaf(t),
      ),
      [],
    );
  });

  it('keep http/ free of the composition root and of the roles', () => {
    assert.deepEqual(
      strays(
        (f) => f.startsWith('http/'),
        (t) => t !== 'main.ts' && !/^(dispatch|templates|notifications|store)\//.test(t),
      ),
      [],
    );
  });

  it('keep templates/ from dispatch/, and store/ from everything but the domain it stores', () => {
    assert.deepEqual(
      strays(
        (f) => f.startsWith('templates/'),
        (t) => !t.startsWith('dispatch/'),
      ),
      [],
    );
    assert.deepEqual(
      strays(
        (f) => f.startsWith('store/'),
        (t) =>
          !/^(dispatch|http|gateway|auth|callbacks|templates\/render|providers)/.test(t) && t !== 'main.ts',
      ),
      [],
    );
  });
});
