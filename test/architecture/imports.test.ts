// Layers that point one way (docs/architecture.md, "Dependencies point one way"): no import
// circle in src/, and the leaves import nothing but leaves.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
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

  it("keep undici out of the API's URL checks: what acceptance imports to check a URL loads no undici", () => {
    // The main thread checks push endpoints and callback URLs (outbound.ts) but sends nothing:
    // undici there cost about 4 MB of idle RSS (decision record 0009).
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const target of imports[file] ?? []) visit(target);
    };
    for (const root of ['notifications/validate.ts', 'callbacks/routes.ts']) visit(root);
    const undici = [...seen].filter((file) => /from 'undici'/.test(readFileSync(`src/${file}`, 'utf8')));
    assert.deepEqual(undici, []);
  });
});
