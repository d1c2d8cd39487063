// #49.4: every shell snippet of the README (and of docs/authentication.md, whose "in 60 seconds"
// block once logged in before the server listened) runs when pasted, against a fresh Herald on
// a fresh data directory and free ports. A fence's info string says how a block is used:
// ```sh runs in the reader's terminal, one file's blocks in order in one shell (variables carry
// over); ```sh server is what the reader starts in a terminal of its own (the test starts it and
// stops it at the end); ```<lang> no-run is not run (the `npm install` the test's checkout has
// already done, a TypeScript example, the container commands). Any other shell or JavaScript
// block fails the test: a snippet is run or says why not.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { tempDir } from '../helpers/config.ts';
import { freePort } from '../helpers/ports.ts';

const ROOT = join(import.meta.dirname, '..', '..');

interface Block {
  lang: string;
  tags: string[];
  code: string;
  line: number;
}

/** The fenced code blocks of a markdown file, with their info strings. */
export function codeBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*(.*)$/.exec(lines[i] ?? '');
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] ?? ''); i++) body.push(lines[i] ?? '');
    blocks.push({
      lang: open[1] ?? '',
      tags: (open[2] ?? '').split(/\s+/).filter(Boolean),
      code: body.join('\n'),
      line: start + 1,
    });
  }
  return blocks;
}

const SHELL = new Set(['sh', 'bash', 'shell', 'console']);
const SCRIPT = new Set(['js', 'javascript', 'mjs', 'ts', 'typescript']);

/** Runs `script` in bash as its own process group (so its background jobs can be stopped). */
function bash(script: string, env: NodeJS.ProcessEnv): ChildProcess {
  return spawn('bash', ['-c', script], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
}

function stopGroup(child: ChildProcess): void {
  // Even once bash has exited: a job it put in the background (`npm start &`) is still in the group.
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    // already gone
  }
}

interface Session {
  run(file: string): Promise<{ code: number; stdout: string; stderr: string }>;
  apiUrl: string;
  close(): void;
}

/** A reader's machine: a fresh data directory, free ports put where the docs say 8080 and 3000. */
async function session(): Promise<Session> {
  const dir = tempDir('herald-snippets-');
  const [api, gateway] = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HERALD_DATA_DIR: join(dir, 'data'),
    HERALD_API_PORT: String(api),
    HERALD_GATEWAY_PORT: String(gateway),
  };
  for (const name of [
    'DATABASE_URL',
    'HERALD_ROLES',
    'HERALD_ADMIN_EMAIL',
    'HERALD_ADMIN_PASSWORD',
    'NODE_OPTIONS',
  ])
    delete env[name];
  const local = (code: string) =>
    code
      .replaceAll('127.0.0.1:8080', `127.0.0.1:${api}`)
      .replaceAll('127.0.0.1:3000', `127.0.0.1:${gateway}`)
      .replaceAll('/tmp/herald-', `${dir}/herald-`);
  const children: ChildProcess[] = [];
  return {
    apiUrl: `http://127.0.0.1:${api}`,
    async run(file) {
      const blocks = codeBlocks(readFileSync(join(ROOT, file), 'utf8'));
      const shell: string[] = [];
      for (const block of blocks) {
        const where = `${file}:${block.line}`;
        if (block.tags.includes('no-run')) continue;
        if (SCRIPT.has(block.lang))
          assert.fail(`${where}: a ${block.lang} block must run or be marked no-run`);
        if (!SHELL.has(block.lang)) continue;
        if (block.tags.includes('server')) {
          const server = bash(local(block.code), env);
          server.stdout?.resume();
          server.stderr?.resume();
          children.push(server);
        } else shell.push(`# ${where}\n${local(block.code)}`);
      }
      // As pasted, but stopping at the first command that fails.
      const child = bash(`set -euo pipefail\n${shell.join('\n')}`, env);
      children.push(child);
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      // A snippet that waits for ever (a server that never listens) fails rather than hangs.
      const limit = setTimeout(() => stopGroup(child), 120_000);
      const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? 1)));
      clearTimeout(limit);
      return { code, stdout, stderr };
    },
    close() {
      for (const child of children) stopGroup(child);
    },
  };
}

/** Problem or OAuth error bodies the snippets printed: a snippet that "ran" but was refused. */
const refusals = (stdout: string) => stdout.split('\n').filter((l) => /"(code|error)":"/.test(l));

describe('the documentation snippets, pasted', () => {
  const open: Session[] = [];
  after(() => {
    for (const s of open) s.close();
  });

  it('README: the quick start sends an email that the sandbox then holds', async () => {
    const s = await session();
    open.push(s);
    const { code, stdout, stderr } = await s.run('README.md');
    assert.equal(code, 0, `the snippets failed:\n${stdout}\n${stderr}`);
    assert.deepEqual(refusals(stdout), []);
    const id = /^sent ([0-9a-f-]{36})$/m.exec(stdout)?.[1];
    assert.ok(id, `no notification ID in:\n${stdout}`);
    assert.match(stdout, new RegExp(`"notificationId":"${id}"`));
    // What the reader then sees in the UI's sandbox page, through the API it calls.
    const login = await fetch(`${s.apiUrl}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'admin@example.com', password: 'change-me-now' }),
    });
    const token = ((await login.json()) as { access_token: string }).access_token;
    // Sent to the sandbox by the worker, shortly after acceptance; what it holds is what the page shows.
    let seen = '';
    for (let i = 0; i < 60 && !seen.includes('"subject":"Hello Ada"'); i++) {
      if (i > 0) await sleep(500);
      const page = await fetch(`${s.apiUrl}/admin/sandbox?notificationId=${id}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      seen = await page.text();
    }
    assert.match(seen, /"subject":"Hello Ada"/);
  });

  it('docs/authentication.md: "in 60 seconds" runs whole, starting Herald itself', async () => {
    const s = await session();
    open.push(s);
    const { code, stdout, stderr } = await s.run('docs/authentication.md');
    assert.equal(code, 0, `the snippets failed:\n${stdout}\n${stderr}`);
    assert.deepEqual(refusals(stdout), []);
    assert.match(stdout, /"kind":"user","email":"admin@example.com","role":"admin"/);
    assert.match(stdout, /^HTTP\/1\.1 401/m);
    // The refresh, the tenant login and the client credentials grant each answer a token.
    assert.equal(stdout.match(/"token_type":"Bearer"/g)?.length, 3, stdout);
    assert.match(stdout, /"disabled":true/);
  });

  it('marks few blocks no-run', () => {
    const skipped = ['README.md', 'docs/authentication.md'].flatMap((file) =>
      codeBlocks(readFileSync(join(ROOT, file), 'utf8'))
        .filter((block) => block.tags.includes('no-run'))
        .map((block) => `${file}:${block.line}`),
    );
    // npm install (the checkout has run it), the typed client's TypeScript example and the
    // container commands (they need an image and a container engine: `npm run test:image` runs them).
    assert.ok(skipped.length <= 3, `no-run blocks: ${skipped.join(', ')}`);
  });
});
