// #49.2: `herald users add --password-stdin` asks twice without echo at a terminal (a real
// pseudo-terminal from util-linux `script`), and reads one line from a pipe left open.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildApi, createDeps } from '../../src/main.ts';
import { tempDir, testConfig } from '../helpers/config.ts';

const BIN = fileURLToPath(new URL('../../bin/herald.js', import.meta.url));
const ADD = ['users', 'add', '--email', 'tty@example.com', '--password-stdin', '--role', 'admin'];
const PASSWORD = 'typed at a terminal, unseen';
const hasScript = spawnSync('script', ['--version']).status === 0;

/** Output of a child so far, and a wait for a pattern in it (or for the child to exit). */
function watch(child: ChildProcess) {
  let output = '';
  const waiters: Array<() => void> = [];
  const onData = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    for (const wake of waiters.splice(0)) wake();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? -1)));
  return {
    output: () => output,
    exited,
    async waitFor(pattern: RegExp): Promise<void> {
      while (!pattern.test(output)) {
        const more = new Promise<void>((resolve) => waiters.push(resolve));
        const code = await Promise.race([more.then(() => undefined), exited]);
        if (code !== undefined && !pattern.test(output)) {
          throw new Error(`exited (${code}) before ${pattern}: ${output}`);
        }
      }
    },
  };
}

/** `herald users add --password-stdin` on a pseudo-terminal; returns the run's handle. */
function onTerminal(dataDir: string) {
  const command = [process.execPath, BIN, ...ADD].map((word) => `'${word}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    env: { ...process.env, HERALD_DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return { child, ...watch(child) };
}

/** Runs the command on a terminal and types `first`, then `second`, each after its prompt. */
async function typeTwice(dataDir: string, first: string, second: string) {
  const run = onTerminal(dataDir);
  await run.waitFor(/Password: $/);
  run.child.stdin?.write(`${first}\r`);
  await run.waitFor(/Repeat the password: $/);
  run.child.stdin?.write(`${second}\r`);
  return run;
}

/** Whether tty@example.com signs in with `password` on the store in `dataDir`. */
async function passwordWorks(dataDir: string, password: string): Promise<boolean> {
  const deps = await createDeps(testConfig({ HERALD_DATA_DIR: dataDir }));
  const app = await buildApi(deps);
  try {
    const login = await app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'tty@example.com', password },
    });
    return login.statusCode === 200;
  } finally {
    await app.close();
    await deps.store.close();
  }
}

describe('herald users add --password-stdin', { timeout: 60_000 }, () => {
  it('asks twice without echo at a terminal and creates the user', {
    skip: !hasScript && 'no script(1)',
  }, async () => {
    const dir = tempDir();
    const run = await typeTwice(dir, PASSWORD, PASSWORD);
    assert.equal(await run.exited, 0, run.output());
    assert.match(run.output(), /created user usr_\S+ tty@example\.com role=admin/);
    assert.ok(!run.output().includes('unseen'), `the password was echoed: ${run.output()}`);
    assert.ok(await passwordWorks(dir, PASSWORD));
  });

  it('refuses two different passwords at a terminal and creates nobody', {
    skip: !hasScript && 'no script(1)',
  }, async () => {
    const dir = tempDir();
    const run = await typeTwice(dir, PASSWORD, 'something else entirely');
    assert.equal(await run.exited, 2, run.output());
    assert.match(run.output(), /the two passwords differ/);
    assert.equal(await passwordWorks(dir, PASSWORD), false);
  });

  it('reads one line from a pipe without waiting for it to close', async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, [BIN, ...ADD], {
      env: { ...process.env, HERALD_DATA_DIR: dir, LOG_LEVEL: 'silent' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const run = watch(child);
    child.stdin?.write(`${PASSWORD}\nthe next line is not read\n`);
    // The pipe stays open: the command finishes on the first line alone.
    assert.equal(await run.exited, 0, run.output());
    child.stdin?.end();
    assert.doesNotMatch(run.output(), /Password:/);
    assert.ok(await passwordWorks(dir, PASSWORD));
  });
});
