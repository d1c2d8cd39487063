// Runs every test/**/*.test.ts with node's test runner through tsx (Node 20 has no --test globs).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

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

// Tests that start Herald as a user does (`node bin/herald.js start`) run the compiled dist/:
// compile the current sources first, so that they never test a stale build.
const build = spawnSync(process.execPath, ['scripts/build.mjs', '--server'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const filters = process.argv.slice(2);
const files = find('test')
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
  .sort();
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-timeout=300000', ...files],
  {
    stdio: 'inherit',
    env: { ...process.env, NODE_EXTRA_CA_CERTS: extraCaCerts() },
  },
);
process.exit(result.status ?? 1);
