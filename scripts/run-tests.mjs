// Runs every test/**/*.test.ts with node's test runner through tsx (Node 20 has no --test globs).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'helpers' ? [] : find(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const filters = process.argv.slice(2);
const files = find('test')
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
  .sort();
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-timeout=300000', ...files],
  {
    stdio: 'inherit',
    // The push peers (test/helpers/peers/) serve TLS with a certificate of this test CA; Node
    // reads NODE_EXTRA_CA_CERTS only at process start, so it is set here for the test processes.
    env: { NODE_EXTRA_CA_CERTS: resolve('test/fixtures/push/ca.pem'), ...process.env },
  },
);
process.exit(result.status ?? 1);
