// The Containerfile's build stage after `npm ci --ignore-scripts`: puts better-sqlite3's addon in
// place, builds Herald, drops the development dependencies and leaves what the runtime stage
// copies in /out. Written for node rather than the shell so that the base needs nothing but node,
// npm and sh (the local base of `npm run test:image` has no coreutils). Decision 0032.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

function run(command, args, env = process.env) {
  const result = spawnSync(command, args, { stdio: 'inherit', env });
  if (result.status !== 0) {
    console.error(
      `image build: ${command} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`})`,
    );
    process.exit(result.status || 1);
  }
}
const quiet = ['--no-audit', '--no-fund'];

// better-sqlite3 is a V8 addon: built for this Node.js major, against the headers SQLITE_HEADERS
// names (docs/node-versions.md), unless SQLITE_ADDON names one already built.
const release = 'node_modules/better-sqlite3/build/Release';
if (process.env.SQLITE_ADDON) {
  mkdirSync(release, { recursive: true });
  cpSync(process.env.SQLITE_ADDON, join(release, 'better_sqlite3.node'));
} else {
  // The official images keep Node's headers beside its binary (/usr/local/include/node).
  let nodedir = dirname(dirname(process.execPath));
  const headers = process.env.SQLITE_HEADERS;
  const prefix = '/tmp/node-headers';
  if (headers) {
    // node-linux-<arch>@<version> carries that version's headers (and binary), from the npm registry.
    run('npm', [
      'install',
      '--no-save',
      ...quiet,
      '--prefix',
      prefix,
      `node-linux-${process.arch}@${headers}`,
    ]);
    nodedir = join(prefix, 'node_modules', `node-linux-${process.arch}`);
  }
  // Build from source: its install script would otherwise ask GitHub for a prebuilt binary made
  // against whichever headers its release used. Set in the environment, which npm's scripts
  // inherit as it is, both reach prebuild-install and node-gyp whatever npm thinks of them (npm
  // 11 warns that it does not know build-from-source).
  const env = { ...process.env, npm_config_build_from_source: 'true', npm_config_nodedir: nodedir };
  run('npm', ['rebuild', 'better-sqlite3'], env);
  rmSync(prefix, { recursive: true, force: true });
}
// A wrong addon fails the build here rather than the container's first start.
run(process.execPath, ['-e', "new (require('better-sqlite3'))(':memory:').close()"]);

run('npm', ['run', 'build']);
run('npm', ['prune', '--omit=dev', '--ignore-scripts', ...quiet]);

// What `herald start` reads: package.json ("type": "module"), bin/, dist/, web/dist/, node_modules/.
// Symlinks (node_modules/.bin) are copied as they are: relative, so they hold in /app too.
const files = ['package.json', 'bin', 'dist', 'web/dist', 'node_modules', 'container/healthcheck.mjs'];
for (const path of files) cpSync(path, join('/out/app', path), { recursive: true, verbatimSymlinks: true });
// The typed client's workspace link: its target (clients/) is not in the image.
rmSync('/out/app/node_modules/@herald', { recursive: true, force: true });
mkdirSync('/out/data', { recursive: true });
