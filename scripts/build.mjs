// `npm run build` (and `prepare`, so `npm install` runs it): compiles src/ to dist/ with tsc,
// copies the SQL migrations beside the compiled stores, compiles the native helper
// (native/malloc-trim.c), builds the web UI and the `<herald-inbox>` element (/inbox.js) into
// web/dist/ and the typed client into clients/typescript/dist/. `--server` skips the UI and the client (what the test runner needs
// after a source change).
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { build } from 'esbuild';
import { buildClient } from '../clients/typescript/build.mjs';

const requireHere = createRequire(import.meta.url);

function run(command, args) {
  const result = spawnSync(command, args, { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function copyAssets(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) copyAssets(path);
    else if (name.endsWith('.sql')) cpSync(path, join('dist', relative('src', path)));
  }
}

function jsFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? jsFiles(path) : path.endsWith('.js') ? [path] : [];
  });
}

/**
 * Packages published as hundreds of small modules, each of which Node's loader resolves, reads and
 * compiles one by one at start-up (TypeBox: 218 files, jose: 23; fastify, its plugins and what
 * they require: over 500 more, undici alone 114, ajv 91, yaml 74, prom-client's
 * @opentelemetry/api 59). Each is bundled into dist/vendor/ (one file per entry, shared code in
 * chunks) and dist's imports of it point there; Herald's own modules stay one file each. Start-up
 * to /health fell from about 1,050 to 810 ms with TypeBox and jose (single starts on this 2-core
 * machine), and with the rest (`npm run bench -- --scenario startup`, medians of 5 starts, before
 * and after run back to back, 2026-11-25) from 566 to 449 ms, 733 to 495 ms and 588 to 582 ms
 * (this machine's start-up varies by a quarter from one run to the next); idle RSS 136 to 131 MB.
 * Node opens 968 files before /health answers without these bundles, 247 with them.
 *
 * The bundles are written without comments or indentation (`minifyWhitespace`; names are kept,
 * so stack traces still name functions): V8 keeps each module's source in the heap for as long as
 * the process runs, and undici's comments hold a few non-Latin-1 characters, which make V8 store
 * its whole 1 MB chunk as two-byte. 2.2 MB less heap in the main thread at idle (2026-11-26).
 *
 * Left out: native modules and pino (its transports start threads from files by path). The
 * bundle's CommonJS code reaches them, and Node's built-ins, through the `require` the banner
 * makes. swagger-ui serves files from its own directory: its `__dirname` is that directory in
 * node_modules, found at run time (`ownDirectory`).
 */
const VENDORED = {
  '@sinclair/typebox': 'typebox.js',
  '@sinclair/typebox/compiler': 'typebox-compiler.js',
  jose: 'jose.js',
  fastify: 'fastify.js',
  '@fastify/ajv-compiler': 'fastify-ajv-compiler.js',
  '@fastify/fast-json-stringify-compiler': 'fastify-fjs-compiler.js',
  '@fastify/helmet': 'fastify-helmet.js',
  '@fastify/static': 'fastify-static.js',
  '@fastify/swagger': 'fastify-swagger.js',
  '@fastify/swagger-ui': 'fastify-swagger-ui.js',
  '@fastify/type-provider-typebox': 'fastify-typebox.js',
  liquidjs: 'liquidjs.js',
  'prom-client': 'prom-client.js',
  // Herald's spans (src/tracing/); the SDK, loaded only when tracing is on, stays in node_modules.
  '@opentelemetry/api': 'opentelemetry-api.js',
  undici: 'undici.js',
};
/** Published as CommonJS only (no ES module build): bundled, it exports only `default`. */
function commonJsOnly(spec) {
  const name = spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');
  const pkg = JSON.parse(readFileSync(join('node_modules', name, 'package.json'), 'utf8'));
  return pkg.type !== 'module' && !pkg.module && !JSON.stringify(pkg.exports ?? {}).includes('"import"');
}
const EXTERNAL = [
  'better-sqlite3',
  'pino',
  // ws's optional native helpers: required inside try/catch, absent here.
  'bufferutil',
  'utf-8-validate',
];
const quoted = Object.keys(VENDORED)
  .map((spec) => spec.replace(/[/.@-]/g, (c) => `\\${c}`))
  .join('|');

/**
 * `vendor:<spec>`: the package itself for an ES module; for CommonJS a module that exports its
 * `module.exports` as `default` and each of its keys by name, as Node's own interop would.
 */
const wrappers = {
  name: 'vendor-entries',
  setup(b) {
    b.onResolve({ filter: /^vendor:/ }, (args) => ({ path: args.path.slice(7), namespace: 'vendor' }));
    b.onLoad({ filter: /.*/, namespace: 'vendor' }, ({ path: spec }) => {
      if (!commonJsOnly(spec)) return { contents: `export * from '${spec}';`, resolveDir: '.' };
      const names = Object.keys(requireHere(spec)).filter(
        (name) => /^[A-Za-z_$][\w$]*$/.test(name) && name !== 'default',
      );
      const contents = `import m from '${spec}'; export default m; export const { ${names.join(', ')} } = m;`;
      return { contents, resolveDir: '.' };
    });
  },
};

/** swagger-ui's modules that name files beside them, and where they are in its package. */
const OWN_FILES = /node_modules[\\/]@fastify[\\/]swagger-ui[\\/](index|lib[\\/]routes)\.js$/;
const ownDirectory = {
  name: 'own-directory',
  setup(b) {
    b.onLoad({ filter: OWN_FILES }, ({ path }) => {
      const inLib = /[\\/]lib[\\/]routes\.js$/.test(path);
      const root = "require('node:path').dirname(require.resolve('@fastify/swagger-ui'))";
      const dir = inLib ? `require('node:path').join(${root}, 'lib')` : root;
      return { contents: `const __dirname = ${dir};\n${readFileSync(path, 'utf8')}`, loader: 'js' };
    });
  },
};

/**
 * undici's cookie helpers check their argument against both its own `Headers` and the global one,
 * and read `globalThis.Headers` when the module loads. That getter makes Node load and compile its
 * own copy of undici (its fetch), about 10 MB of RSS in a bare `node`, in the dispatch thread
 * (which loads undici for Web Push and status callbacks and never calls the cookie helpers). The
 * check list is built at the first call instead; what it accepts is unchanged. The build fails
 * if undici's line changes, so an upgrade cannot drop this silently.
 */
const UNDICI_COOKIES = /node_modules[\\/]undici[\\/]lib[\\/]web[\\/]cookies[\\/]index\.js$/;
const EAGER_CHECK =
  'const brandChecks = webidl.brandCheckMultiple([Headers, globalThis.Headers].filter(Boolean))';
const LAZY_CHECK =
  'let checks; const brandChecks = (headers) => (checks ??= webidl.brandCheckMultiple([Headers, globalThis.Headers].filter(Boolean)))(headers)';
const lazyGlobalHeaders = {
  name: 'lazy-global-headers',
  setup(b) {
    b.onLoad({ filter: UNDICI_COOKIES }, ({ path }) => {
      const source = readFileSync(path, 'utf8');
      if (!source.includes(EAGER_CHECK)) throw new Error(`${path}: its global Headers check changed`);
      return { contents: source.replace(EAGER_CHECK, LAZY_CHECK), loader: 'js' };
    });
  },
};

async function vendor() {
  await build({
    entryPoints: Object.fromEntries(
      Object.entries(VENDORED).map(([spec, file]) => [file.slice(0, -3), `vendor:${spec}`]),
    ),
    plugins: [wrappers, ownDirectory, lazyGlobalHeaders],
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    // A package's ES module build where it has one (liquidjs), as commonJsOnly assumes.
    mainFields: ['module', 'main'],
    target: 'node20',
    outdir: 'dist/vendor',
    external: EXTERNAL,
    banner: {
      js: [
        "import { createRequire as __heraldRequire } from 'node:module';",
        "import { fileURLToPath as __heraldPath } from 'node:url';",
        'const require = __heraldRequire(import.meta.url);',
        'const __filename = __heraldPath(import.meta.url);',
        "const __dirname = __heraldPath(new URL('.', import.meta.url));",
      ].join(' '),
    },
    minifyWhitespace: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const specifier = new RegExp(`(from\\s*|import\\(\\s*)'(${quoted})'`, 'g');
  for (const file of jsFiles('dist')) {
    if (file.startsWith(join('dist', 'vendor'))) continue;
    const source = readFileSync(file, 'utf8');
    const rewritten = source.replace(specifier, (_, lead, spec) => {
      const target = relative(dirname(file), join('dist', 'vendor', VENDORED[spec])).replaceAll('\\', '/');
      return `${lead}'${target.startsWith('.') ? target : `./${target}`}'`;
    });
    if (rewritten !== source) writeFileSync(file, rewritten);
  }
  // A vendored package left to Node (its subpath, say) would load a second copy beside the bundle.
  const unvendored = new RegExp(`(from\\s*|import\\(\\s*)'(${quoted})(/[^']*)?'`);
  const left = jsFiles('dist').filter(
    (f) => !f.startsWith(join('dist', 'vendor')) && unvendored.test(readFileSync(f, 'utf8')),
  );
  if (left.length > 0) throw new Error(`vendored imports left in ${left.join(', ')}`);
}

/**
 * native/malloc-trim.c to dist/native/malloc-trim.node, with the system's C compiler and the
 * Node-API headers of `node-api-headers` (no node-gyp, which would fetch Node's headers from the
 * network). Linux only: the helper calls glibc. Optional: without a compiler Herald runs as
 * before, without giving start-up's C heap back (src/memory-trim.ts), and the build says so.
 */
function nativeHelper() {
  if (process.platform !== 'linux') return;
  const out = join('dist', 'native', 'malloc-trim.node');
  mkdirSync(dirname(out), { recursive: true });
  const include = requireHere('node-api-headers').include_dir;
  const cc = process.env.CC || 'cc';
  const args = ['-shared', '-fPIC', '-O2', '-Wall', `-I${include}`, 'native/malloc-trim.c', '-o', out];
  const result = spawnSync(cc, args, { stdio: 'inherit' });
  if (result.status !== 0) {
    console.warn(
      `build: ${cc} could not compile native/malloc-trim.c (${result.error?.message ?? `exit ${result.status}`}); ` +
        'Herald runs without it, holding about 6 MB more memory at idle',
    );
  }
}

const bin = (name) => join('node_modules', '.bin', name);
/**
 * A line before each step: `npm install` runs this build through `prepare` and would otherwise
 * show nothing for the minutes it takes (with foreground-scripts=true in .npmrc, npm shows the
 * output of install scripts, better-sqlite3's native build included).
 */
const step = (what) => console.log(`herald build: ${what}`);
const started = Date.now();
rmSync('dist', { recursive: true, force: true });
step('compiling the server (src/ to dist/ with tsc)…');
run(bin('tsc'), ['-p', 'tsconfig.build.json']);
copyAssets('src');
step('compiling the native memory helper (native/malloc-trim.c)…');
nativeHelper();
step("bundling the server's dependencies (dist/vendor/ with esbuild)…");
await vendor();
if (!process.argv.includes('--server')) {
  step('building the web UI (web/dist/ with vite)…');
  run(bin('vite'), ['build', '--config', 'web/vite.config.ts', '--logLevel', 'warn']);
  // After Vite, which empties web/dist: the gateway serves the element from there as /inbox.js.
  step('building the <herald-inbox> element (web/dist/inbox.js with esbuild)…');
  // Imported here, not at the top: a `--server` build needs nothing of web/ (test/packaging's copy has none).
  const { buildInbox } = await import('../web/inbox/build.mjs');
  await buildInbox();
  // The typed client's dist/, which `@herald/client` (the workspace link) resolves to.
  step('building the typed client (clients/typescript/dist/, ESM and CommonJS)…');
  await buildClient();
}
step(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
