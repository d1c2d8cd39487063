// `npm run build` (and `prepare`, so `npm install` runs it): compiles src/ to dist/ with tsc,
// copies the SQL migrations beside the compiled stores, and builds the web UI into web/dist/.
// `--server` skips the UI (what the test runner needs after a source change).
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

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

const bin = (name) => join('node_modules', '.bin', name);
rmSync('dist', { recursive: true, force: true });
run(bin('tsc'), ['-p', 'tsconfig.build.json']);
copyAssets('src');
if (!process.argv.includes('--server'))
  run(bin('vite'), ['build', '--config', 'web/vite.config.ts', '--logLevel', 'warn']);
