// `npm run test:image` (not part of `npm test`; .ci/run runs it once): builds Herald's image from
// the Containerfile on a local base (scripts/image/local-base.mjs), starts it, waits for /health,
// runs its HEALTHCHECK, signs in as the bootstrap admin, sends an email that the sandbox delivers,
// stops it with SIGTERM (it must exit, cleanly, within 10 s) and prints the image's size.
// Podman runs as this machine allows (decision 0032): vfs storage (in a temporary root of its
// own, removed at the end with every image and container in it), runc, cgroupfs, no default
// ulimits, the host's network. It installs nothing on the machine: see .ci/run for the packages.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ADDON_IN_IMAGE, nodePackage, sqliteAddon, writeBase } from './image/local-base.mjs';

/** The base's Node.js: 24, the image's default major, at 24.18.1 (docs/node-versions.md). */
const NODE_VERSION = '24.18.1';
const STOP_LIMIT_MS = 10_000;
const started = Date.now();
const repo = resolve(import.meta.dirname, '..');
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;
const say = (line) => console.log(`test:image [${elapsed()}]: ${line}`);

/** The path of a command this test needs, or the end of the test saying how to install it. */
function need(command, hint) {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  if (found.status !== 0) {
    console.error(`test:image: ${command} is missing (${hint})`);
    process.exit(1);
  }
  return found.stdout.trim();
}
need('podman', 'apt-get install podman buildah runc tini');
need('runc', 'apt-get install runc');
need('ldd', 'libc-bin');
// Debian's static tini: the local base's init, as the official images get tini from apt.
const tini = need('tini-static', 'apt-get install tini');

const work = mkdtempSync(join(tmpdir(), 'herald-image-'));
// crun and podman's default ulimits fail on this kind of machine; runc with none works.
const conf = join(work, 'containers.conf');
writeFileSync(conf, '[containers]\ndefault_ulimits = []\n');
const env = { ...process.env, CONTAINERS_CONF: conf };
const flags = [
  `--root=${join(work, 'storage')}`,
  `--runroot=${join(work, 'run')}`,
  '--storage-driver=vfs',
  '--runtime=runc',
  '--cgroup-manager=cgroupfs',
  '--events-backend=file',
];

/**
 * podman with the flags above; its output is returned (`show`: passed through as it comes). Past
 * `timeoutMs` it is killed and the test fails rather than hangs.
 */
function podman(args, { show = false, timeoutMs = 30 * 60_000 } = {}) {
  const result = spawnSync('podman', [...flags, ...args], {
    env,
    encoding: 'utf8',
    stdio: ['ignore', show ? 'inherit' : 'pipe', show ? 'inherit' : 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
    timeout: timeoutMs,
  });
  if (result.status !== 0) {
    const why = result.error?.message ?? `exit ${result.status}`;
    throw new Error(`podman ${args.join(' ')}: ${why}\n${result.stderr ?? ''}`);
  }
  return (result.stdout ?? '').trim();
}

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
    server.on('error', fail);
  });
}

/** Calls `attempt` until it returns something, or fails naming `what` after `ms`. */
async function until(what, ms, attempt) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await attempt().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const tag = randomUUID().slice(0, 8);
const baseImage = `localhost/herald-test-node:${NODE_VERSION}-${tag}`;
const image = `localhost/herald-test:${tag}`;
const container = `herald-test-${tag}`;
let failed = false;
try {
  const nodeDir = nodePackage(NODE_VERSION);
  const addon = sqliteAddon(NODE_VERSION, nodeDir);
  const root = join(work, 'base');
  const changes = writeBase(root, { nodeDir, addon, tini });
  const tarball = join(work, 'base.tar');
  const tar = spawnSync('tar', ['-C', root, '--numeric-owner', '-cf', tarball, '.'], { stdio: 'inherit' });
  if (tar.status !== 0) throw new Error(`tar of the local base failed (exit ${tar.status})`);
  podman(['import', ...changes.flatMap((change) => ['--change', change]), tarball, baseImage]);
  say(`local base ${baseImage} (Node.js ${NODE_VERSION}) imported`);

  // --format docker: the OCI format has no HEALTHCHECK. The npm cache of this machine is lent to
  // `npm ci`, with a user config that prefers it: the lockfile names no tarball URLs, so npm would
  // otherwise ask the registry about each of some 500 packages. Mounted, neither is in the image.
  const npmCache = spawnSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).stdout.trim();
  const npmrc = join(work, 'npmrc');
  writeFileSync(npmrc, 'prefer-offline=true\n');
  podman(
    [
      'build',
      '--pull=never',
      '--layers=false',
      '--format=docker',
      '--network=host',
      `--volume=${npmCache}:/root/.npm`,
      `--volume=${npmrc}:/root/.npmrc:ro`,
      `--build-arg=NODE_IMAGE=${baseImage}`,
      `--build-arg=NODE_RUNTIME_IMAGE=${baseImage}`,
      `--build-arg=SQLITE_ADDON=${ADDON_IN_IMAGE}`,
      `--tag=${image}`,
      '--file=Containerfile',
      repo,
    ],
    { show: true },
  );
  say(`image ${image} built`);

  const apiPort = await freePort();
  const gatewayPort = await freePort();
  const email = 'admin@example.com';
  const password = `Image-test-${randomUUID()}`;
  const api = `http://127.0.0.1:${apiPort}`;
  podman([
    'run',
    '--detach',
    `--name=${container}`,
    '--network=host',
    `--env=HERALD_API_PORT=${apiPort}`,
    `--env=HERALD_GATEWAY_PORT=${gatewayPort}`,
    `--env=HERALD_PUBLIC_URL=${api}`,
    `--env=HERALD_ADMIN_EMAIL=${email}`,
    `--env=HERALD_ADMIN_PASSWORD=${password}`,
    image,
  ]);
  await until('/health', 60_000, async () => ((await fetch(`${api}/health`)).ok ? true : undefined));
  say('/health answers');
  podman(['healthcheck', 'run', container]);
  const uid = podman(['exec', container, 'node', '-p', 'process.getuid()']);
  if (uid === '0') throw new Error('Herald runs as root in the container');
  const volumes = podman(['image', 'inspect', '--format={{json .Config.Volumes}}', image]);
  if (!volumes.includes('"/data"')) throw new Error(`/data is not a volume: ${volumes}`);
  say(`healthy, running as uid ${uid}, data in the /data volume`);

  const json = { 'content-type': 'application/json' };
  const login = await fetch(`${api}/auth/login`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ email, password }),
  });
  if (!login.ok) throw new Error(`login: ${login.status} ${await login.text()}`);
  const auth = { authorization: `Bearer ${(await login.json()).access_token}` };
  const sent = await fetch(`${api}/notifications`, {
    method: 'POST',
    headers: { ...json, ...auth },
    body: JSON.stringify({
      channel: 'email',
      recipient: { email: 'ada@example.com' },
      content: { subject: 'From the image', text: 'Sent by npm run test:image.' },
    }),
  });
  if (sent.status !== 201) throw new Error(`send: ${sent.status} ${await sent.text()}`);
  const { notificationId } = await sent.json();
  let status;
  await until(`notification ${notificationId} to be DELIVERED (last status ${status})`, 60_000, async () => {
    status = (await (await fetch(`${api}/notifications/${notificationId}`, { headers: auth })).json()).status;
    return status === 'DELIVERED' ? true : undefined;
  });
  say(`signed in, notification ${notificationId} DELIVERED by the sandbox`);

  // SIGTERM to PID 1 (tini), which passes it on; Herald drains and exits 0.
  const stopping = Date.now();
  podman(['kill', '--signal=TERM', container]);
  const exitCode = podman(['wait', container], { timeoutMs: 60_000 });
  const stopMs = Date.now() - stopping;
  if (stopMs > STOP_LIMIT_MS)
    throw new Error(`took ${stopMs} ms to stop on SIGTERM (limit ${STOP_LIMIT_MS})`);
  if (exitCode !== '0') throw new Error(`exited with ${exitCode} on SIGTERM`);
  say(`stopped on SIGTERM in ${stopMs} ms, exit code 0`);

  const size = (name) => Number(podman(['image', 'inspect', '--format={{.Size}}', name]));
  const mb = (bytes) => `${(bytes / 1e6).toFixed(0)} MB`;
  say(`image size ${mb(size(image))} (its local base alone: ${mb(size(baseImage))})`);
} catch (error) {
  failed = true;
  console.error(`test:image: FAILED: ${error.message}`);
  try {
    console.error(podman(['logs', '--tail=50', container]));
  } catch {
    // no container was started
  }
} finally {
  // Everything lives in this run's own storage: removing it removes every image and container.
  try {
    podman(['rm', '--force', '--all', '--volumes']);
    podman(['rmi', '--force', '--all']);
  } catch (error) {
    console.error(`test:image: cleaning up: ${error.message}`);
  }
  rmSync(work, { recursive: true, force: true });
}
say(failed ? 'failed' : 'passed');
process.exit(failed ? 1 : 0);
