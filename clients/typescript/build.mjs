// Builds @herald/client for publishing (`npm pack` runs it first, and so does the repo's
// scripts/build.mjs): src/index.ts compiled by esbuild to an ES module (dist/esm) and to
// CommonJS (dist/cjs, marked by its own package.json), each with the declarations tsc writes
// from src/. openapi-fetch stays a dependency (it ships both formats too), not bundled in.
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');

/**
 * In the CommonJS build, `import createClient from 'openapi-fetch'` is its `exports.default`.
 * esbuild follows Node's rule for an ES module of a "type": "module" package importing CommonJS
 * (the default is the whole `module.exports`), which would call openapi-fetch's exports object.
 */
const openapiFetchDefault = {
  name: 'openapi-fetch-default',
  setup(b) {
    b.onResolve({ filter: /^openapi-fetch$/ }, ({ namespace }) =>
      namespace === 'interop' ? undefined : { path: 'openapi-fetch', namespace: 'interop' },
    );
    b.onLoad({ filter: /.*/, namespace: 'interop' }, () => ({
      contents: "module.exports = require('openapi-fetch').default;",
      loader: 'js',
      resolveDir: here,
    }));
  },
};

export async function buildClient() {
  rmSync(dist, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const types = spawnSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.json')], { stdio: 'inherit' });
  if (types.status !== 0) throw new Error('@herald/client: tsc could not write the declarations');
  for (const format of ['esm', 'cjs']) {
    await build({
      entryPoints: [join(here, 'src', 'index.ts')],
      outfile: join(dist, format, 'index.js'),
      bundle: true,
      packages: 'external',
      format,
      plugins: format === 'cjs' ? [openapiFetchDefault] : [],
      // Browsers and Node 20 alike: nothing of Node's is used, only fetch.
      platform: 'neutral',
      target: 'es2022',
      logLevel: 'warning',
    });
    cpSync(join(dist, 'types'), join(dist, format), { recursive: true });
  }
  // tsc keeps the source's `./schema.ts` in declarations; an installed package has schema.d.ts.
  for (const format of ['esm', 'cjs']) {
    const file = join(dist, format, 'index.d.ts');
    writeFileSync(file, readFileSync(file, 'utf8').replaceAll("from './schema.ts'", "from './schema.js'"));
  }
  // The package is "type": "module"; this makes dist/cjs/*.js (and its .d.ts) CommonJS.
  writeFileSync(join(dist, 'cjs', 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
  rmSync(join(dist, 'types'), { recursive: true });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await buildClient();
