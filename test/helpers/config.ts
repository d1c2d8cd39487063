import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Config, loadConfig } from '../../src/config/config.ts';
import type { Env } from '../../src/config/read.ts';

/** A fresh temporary data directory. */
export function tempDir(prefix = 'herald-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A config for tests: temp data dir, random ports, quiet logs; `env` overrides any variable. */
export function testConfig(env: Env = {}): Config {
  return loadConfig({
    HERALD_DATA_DIR: tempDir(),
    HERALD_API_PORT: '0',
    HERALD_GATEWAY_PORT: '0',
    LOG_LEVEL: 'silent',
    // In-process tests drive the worker on the test's thread (and clock); the dispatch thread is
    // tested through real processes (test/dispatch/thread.test.ts and every startHeraldProcess).
    HERALD_DISPATCH_THREAD: 'false',
    ...env,
  });
}
