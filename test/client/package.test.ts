// @herald/client as a user gets it: `npm pack` (which builds it), the tarball installed into an
// empty CommonJS project and an empty ES module project, each sending a notification with plain
// `node` to a running Herald, and each type-checked by tsc the way that project resolves it.
//
// Offline: the client's own dependencies (openapi-fetch and what it needs) are packed from the
// repository's node_modules and installed beside it, so npm has nothing to fetch.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createHeraldClient } from '../../clients/typescript/src/index.ts';
import type { Herald } from '../../src/main.ts';
import { CLIENT_ADMIN as ADMIN, startClientHerald } from '../helpers/client-herald.ts';
import { tempDir } from '../helpers/config.ts';

const execFileAsync = promisify(execFile);
const CLIENT_DIR = fileURLToPath(new URL('../../clients/typescript/', import.meta.url));

/** The environment without the npm_* variables of an `npm test` run, which would steer the child npm. */
const cleanEnv = (extra: Record<string, string> = {}) => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_'))),
  ...extra,
});

/** Runs a command to its end without blocking: the in-process Herald answers the child meanwhile. */
async function run(command: string, args: string[], cwd: string, env = cleanEnv()): Promise<string> {
  try {
    return (await execFileAsync(command, args, { cwd, env, encoding: 'utf8' })).stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} in ${cwd} failed:\n${stdout}\n${stderr}`);
  }
}

/** `npm pack` of `dir` into `into`: the tarball's path and the files it holds. */
async function pack(dir: string, into: string, extra: string[] = []) {
  const [packed] = JSON.parse(
    await run('npm', ['pack', '--json', '--pack-destination', into, ...extra], dir),
  ) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  assert.ok(packed);
  return { tarball: join(into, packed.filename), files: packed.files.map((f) => f.path) };
}

/** Where Node finds package `name` from `dir` (its package.json need not be exported). */
function packageDir(name: string, dir: string): string {
  const candidates = createRequire(join(dir, 'package.json')).resolve.paths(name) ?? [];
  const found = candidates.find((modules) => existsSync(join(modules, name, 'package.json')));
  assert.ok(found, `${name} is not installed`);
  return join(found, name);
}

/** Tarballs of the dependencies of the package in `dir`, and of theirs, from node_modules. */
async function packDependencies(dir: string, into: string, seen = new Set<string>()): Promise<string[]> {
  const { dependencies = {} } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const tarballs: string[] = [];
  for (const name of Object.keys(dependencies)) {
    if (seen.has(name)) continue;
    seen.add(name);
    const found = packageDir(name, dir);
    // Their own prepack scripts need their own build tools: the directory is packed as it is.
    tarballs.push((await pack(found, into, ['--ignore-scripts'])).tarball);
    tarballs.push(...(await packDependencies(found, into, seen)));
  }
  return tarballs;
}

/** What each project runs with plain node: a send, and a refused send's message. */
const SEND = `
  const herald = createHeraldClient({
    baseUrl: process.env.HERALD_URL,
    credentials: { clientId: process.env.HERALD_CLIENT_ID, clientSecret: process.env.HERALD_CLIENT_SECRET },
  });
  const { notificationId } = await herald.send({
    channel: 'email', recipient: { email: process.env.TO }, content: { subject: 'Hello', text: 'Hi' },
  });
  const refused = await herald
    .send({ channel: 'email', recipient: { email: 'not an address' }, content: { subject: 'x', text: 'y' } })
    .catch((error) => error);
  console.log(JSON.stringify({ notificationId, isApiError: refused instanceof HeraldApiError, message: refused.message }));
`;

/** Type-checked in each project: the declarations resolve, and they are precise (not `any`). */
const CHECK = `
import { createHeraldClient, HeraldApiError, type Notification } from '@herald/client';

const herald = createHeraldClient({ baseUrl: 'http://127.0.0.1:1', credentials: { clientId: 'a', clientSecret: 'b' } });
export async function statusOf(to: string): Promise<Notification['status']> {
  const { notificationId } = await herald.send({ channel: 'email', recipient: { email: to }, content: { subject: 's', text: 't' } });
  return (await herald.get(notificationId)).status;
}
export const fieldErrors = (error: unknown) => (error instanceof HeraldApiError ? error.problem?.errors?.length : 0);
// @ts-expect-error: Herald has no such channel.
export const wrong = () => herald.send({ channel: 'pigeon', recipient: {}, content: {} });
`;

const PROJECTS = {
  commonjs: {
    script: `const { createHeraldClient, HeraldApiError } = require('@herald/client');\n(async () => {${SEND}})();\n`,
  },
  module: { script: `import { createHeraldClient, HeraldApiError } from '@herald/client';\n${SEND}` },
} as const;

describe('@herald/client, packed and installed', () => {
  let herald: Herald;
  let baseUrl: string;
  let service: { clientId: string; clientSecret: string };
  const work = tempDir('herald-client-package-');
  let tarballs: string[];
  let files: string[];

  before(async () => {
    herald = await startClientHerald();
    baseUrl = herald.apiUrl as string;
    const admin = createHeraldClient({ baseUrl, credentials: ADMIN });
    const created = await admin.api.POST('/admin/clients', {
      body: { name: 'package-test', scopes: ['notifications:send', 'notifications:read'] },
    });
    assert.equal(created.response.status, 201);
    service = {
      clientId: created.data?.client_id as string,
      clientSecret: created.data?.client_secret as string,
    };
    const client = await pack(CLIENT_DIR, work);
    files = client.files;
    tarballs = [client.tarball, ...(await packDependencies(CLIENT_DIR, work))];
  });
  after(async () => {
    await herald.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('packs the compiled builds, their declarations and the README, not the sources', () => {
    for (const file of [
      'dist/esm/index.js',
      'dist/esm/index.d.ts',
      'dist/cjs/index.js',
      'dist/cjs/index.d.ts',
    ]) {
      assert.ok(files.includes(file), `${file} is in the package`);
    }
    assert.ok(files.includes('README.md'));
    assert.ok(files.includes('dist/cjs/package.json'), 'dist/cjs is marked CommonJS');
    assert.deepEqual(
      files.filter((f) => f.startsWith('src/') || f === 'build.mjs'),
      [],
    );
    const manifest = JSON.parse(readFileSync(join(CLIENT_DIR, 'package.json'), 'utf8'));
    assert.equal(manifest.private, undefined, 'publishable');
  });

  for (const [type, { script }] of Object.entries(PROJECTS)) {
    it(`sends a notification from an empty ${type} project`, async () => {
      const project = join(work, type);
      mkdirSync(project);
      writeFileSync(
        join(project, 'package.json'),
        JSON.stringify({ name: `app-${type}`, private: true, type }),
      );
      await run('npm', ['install', '--offline', '--no-audit', '--no-fund', ...tarballs], project);
      writeFileSync(join(project, 'send.js'), script);
      const to = `${type}@example.com`;
      const out = await run(
        process.execPath,
        ['send.js'],
        project,
        cleanEnv({
          HERALD_URL: baseUrl,
          HERALD_CLIENT_ID: service.clientId,
          HERALD_CLIENT_SECRET: service.clientSecret,
          TO: to,
        }),
      );
      const { notificationId, isApiError, message } = JSON.parse(out.trim());
      const admin = createHeraldClient({ baseUrl, credentials: ADMIN });
      const sent = await admin.get(notificationId);
      assert.equal(sent.channel, 'email');
      assert.equal(sent.notificationId, notificationId);
      assert.ok(isApiError, 'a refused call throws HeraldApiError');
      assert.match(message, /^400 VALIDATION_FAILED: .*\/recipient\/email/);

      writeFileSync(join(project, 'check.ts'), CHECK);
      writeFileSync(
        join(project, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'node16',
            strict: true,
            noEmit: true,
            lib: ['es2022', 'dom'],
            types: [],
            // The package's declarations are checked too, not only used.
            skipLibCheck: false,
          },
          files: ['check.ts'],
        }),
      );
      await run(
        process.execPath,
        [createRequire(import.meta.url).resolve('typescript/bin/tsc'), '-p', '.'],
        project,
      );
    });
  }
});
