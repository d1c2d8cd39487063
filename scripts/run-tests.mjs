// Runs every test/**/*.test.ts with node's test runner through tsx (Node 20 has no --test globs).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'helpers' ? [] : find(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

// The push peers (test/helpers/peers/) serve TLS with a certificate of the test CA; Node reads
// NODE_EXTRA_CA_CERTS only at process start, so it is set here for the test processes. The
// variable names one file, so a bundle already set by the environment is kept beside ours.
function extraCaCerts() {
  const testCa = resolve('test/fixtures/push/ca.pem');
  const existing = process.env.NODE_EXTRA_CA_CERTS;
  if (!existing || !existsSync(existing)) return testCa;
  const bundle = join(tmpdir(), `herald-test-ca-${process.pid}.pem`);
  process.on('exit', () => rmSync(bundle, { force: true }));
  writeFileSync(bundle, `${readFileSync(existing, 'utf8')}\n${readFileSync(testCa, 'utf8')}`);
  return bundle;
}

/** Runs a command to its end (its output goes to ours); resolves with its exit code. */
function run(args, env = process.env) {
  const child = spawn(process.execPath, args, { stdio: 'inherit', env });
  // A signal to this process is passed on, so that the run ends through the child's exit and
  // the PostgreSQL below is stopped.
  const forward = (signal) => child.kill(signal);
  process.on('SIGINT', forward).on('SIGTERM', forward);
  return new Promise((done) => {
    child.once('exit', (code) => {
      process.off('SIGINT', forward).off('SIGTERM', forward);
      done(code ?? 1);
    });
  });
}

/** Whether any of `files`, or a test/ or bench/ module they import, uses the PostgreSQL helper. */
function usesPostgres(files) {
  const seen = new Set();
  const queue = files.map((file) => resolve(file));
  while (queue.length > 0) {
    const file = queue.pop();
    if (seen.has(file) || !existsSync(file)) continue;
    seen.add(file);
    if (file.endsWith(join('test', 'helpers', 'postgres.ts'))) return true;
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(/(?:from|import\()\s*'(\.[^']+\.ts)'/g)) {
      const target = resolve(dirname(file), spec);
      // src/ never imports test helpers: no need to read it.
      if (!target.startsWith(resolve('src'))) queue.push(target);
    }
  }
  return false;
}

/**
 * What dist/ is built from: a change to any of these after a build started makes it stale.
 * node_modules counts through package-lock.json (dist/vendor/ bundles packages from it).
 */
const BUILD_INPUTS = [
  'src',
  'native',
  'scripts/build.mjs',
  'tsconfig.json',
  'tsconfig.build.json',
  'package-lock.json',
];
/** When this script last built dist/ (gitignored .tmp/): the build's start and end. */
const BUILD_STAMP = join('.tmp', 'run-tests-build.json');

function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

/**
 * Whether dist/ is this script's last build of the sources as they are now: no input changed
 * since that build started, and dist/ itself was not made again since it ended (a build by hand,
 * which may have failed half-way). The suite then runs on it without building again: CI's runs on
 * Node 22 and 24 follow the one on Node 20 with the same sources.
 */
function buildIsCurrent() {
  if (!existsSync(BUILD_STAMP) || !existsSync('dist')) return false;
  const { started, ended } = JSON.parse(readFileSync(BUILD_STAMP, 'utf8'));
  const inputs = Math.max(...BUILD_INPUTS.map(newestMtime));
  return inputs < started && statSync('dist').mtimeMs <= ended;
}

/**
 * One PostgreSQL for the whole run, started beside the build: each test process would otherwise
 * run initdb and start a server of its own (23 files do), where creating a database on a
 * running server takes a moment. The suites already support a shared server (the one in
 * HERALD_TEST_DATABASE_URL, e.g. CI's or a developer's): each creates and drops databases of its
 * own, and the files run one at a time. A server named by the environment is used as it is.
 */
async function startRunPostgres() {
  const { tsImport } = await import('tsx/esm/api');
  const { startPostgres } = await tsImport('../test/helpers/postgres.ts', import.meta.url);
  return startPostgres();
}

// Arguments: substrings of the files to run (none: every file), and `--skip <substring>` for
// files to leave out (CI's runs on its other Node majors: .ci/run says which and why).
const filters = [];
const skips = [];
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] === '--skip') skips.push(process.argv[++i] ?? '');
  else filters.push(process.argv[i]);
}
const files = find('test')
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
  .filter((file) => !skips.some((s) => s !== '' && file.includes(s)))
  .sort();
const postgres =
  !process.env.HERALD_TEST_DATABASE_URL?.trim() && usesPostgres(files) ? startRunPostgres() : undefined;
// Don't let a failed start surface as an unhandled rejection while the build runs.
postgres?.catch(() => undefined);

// Tests that start Herald as a user does (`node bin/herald.js start`) run the compiled dist/:
// compile the current sources first (unless dist/ is their build already), so that they never
// test a stale build.
let built = 0;
if (!buildIsCurrent()) {
  const started = Date.now();
  built = await run(['scripts/build.mjs', '--server']);
  if (built === 0) {
    mkdirSync('.tmp', { recursive: true });
    writeFileSync(BUILD_STAMP, JSON.stringify({ started, ended: Date.now() }));
  }
}
const server = await postgres;
let status = built;
if (built === 0) {
  status = await run(
    [
      '--import',
      'tsx',
      '--test',
      '--test-concurrency=1',
      '--test-timeout=300000',
      '--test-reporter=tap',
      '--test-reporter-destination=stdout',
      `--test-reporter=${resolve('scripts/test-times-reporter.mjs')}`,
      '--test-reporter-destination=stdout',
      `--test-reporter=${resolve('scripts/test-failures-reporter.mjs')}`,
      '--test-reporter-destination=stdout',
      ...files,
    ],
    {
      ...process.env,
      NODE_EXTRA_CA_CERTS: extraCaCerts(),
      ...(server ? { HERALD_TEST_DATABASE_URL: server.adminUrl } : {}),
    },
  );
}
await server?.stop();
process.exit(status);
