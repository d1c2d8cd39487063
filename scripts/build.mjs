// `npm run build` (and `prepare`, so `npm install` runs it): compiles src/ to dist/ with tsc,
// copies the SQL migrations beside the compiled stores, and builds the web UI into web/dist/.
// `--server` skips the UI (what the test runner needs after a source change).
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { build } from 'esbuild';

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
 * Packages published as hundreds of small ES modules, each of which Node's ESM loader resolves,
 * reads and links one by one at start-up (TypeBox: 218 files, jose: 23). Each is bundled into
 * dist/vendor/ (one file per entry, shared code in chunks) and dist's imports of it point there;
 * Herald's own modules stay one file each. Start-up to /health fell from about 1,050 to 810 ms
 * with it (single starts on this 2-core machine; `npm run bench -- --scenario startup` has medians).
 */
const VENDORED = {
  '@sinclair/typebox': 'typebox.js',
  '@sinclair/typebox/compiler': 'typebox-compiler.js',
  jose: 'jose.js',
};

async function vendor() {
  await build({
    entryPoints: Object.fromEntries(
      Object.entries(VENDORED).map(([spec, file]) => [file.slice(0, -3), spec]),
    ),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir: 'dist/vendor',
    logLevel: 'warning',
  });
  const specifier = /(from\s*|import\(\s*)'(@sinclair\/typebox(?:\/compiler)?|jose)'/g;
  for (const file of jsFiles('dist')) {
    if (file.startsWith(join('dist', 'vendor'))) continue;
    const source = readFileSync(file, 'utf8');
    const rewritten = source.replace(specifier, (_, lead, spec) => {
      const target = relative(dirname(file), join('dist', 'vendor', VENDORED[spec])).replaceAll('\\', '/');
      return `${lead}'${target.startsWith('.') ? target : `./${target}`}'`;
    });
    if (rewritten !== source) writeFileSync(file, rewritten);
  }
  const unvendored = /(from\s*|import\(\s*)'(@sinclair\/typebox[^']*|jose)'/;
  const left = jsFiles('dist').filter(
    (f) => !f.startsWith(join('dist', 'vendor')) && unvendored.test(readFileSync(f, 'utf8')),
  );
  if (left.length > 0) throw new Error(`vendored imports left in ${left.join(', ')}`);
}

const bin = (name) => join('node_modules', '.bin', name);
rmSync('dist', { recursive: true, force: true });
run(bin('tsc'), ['-p', 'tsconfig.build.json']);
copyAssets('src');
await vendor();
if (!process.argv.includes('--server'))
  run(bin('vite'), ['build', '--config', 'web/vite.config.ts', '--logLevel', 'warn']);
