import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/herald.js', import.meta.url));

/** A `herald` child process: its URLs once started, and the tail of what it printed. */
export interface HeraldProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  apiUrl?: string;
  gatewayUrl?: string;
  /** The last lines it printed (for failure messages). */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it has exited. */
  stop(graceMs?: number): Promise<void>;
  /** Resolves with the exit code (or signal) when the process ends. */
  exited: Promise<number | string>;
}

/**
 * Runs `node bin/herald.js <args>` (or another `bin`, e.g. an installed package's) with `env` on top of this process's environment, waiting for
 * `herald start` to print its "Herald running" line (up to `timeoutMs`). A process that exits or
 * stays silent fails with its own output in the message, so a missing role reads clearly.
 */
export async function startHeraldProcess(
  name: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
  bin = BIN,
): Promise<HeraldProcess> {
  const child = spawn(process.execPath, [bin, 'start'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  const proc: HeraldProcess = {
    name,
    child,
    pid: child.pid as number,
    output: () => tail,
    exited,
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  const started = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onData = () => {
      const line = /Herald running \(([^)]*)\)([^\n]*)/.exec(tail);
      if (!line) return;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      resolve(line[2] ?? '');
    };
    child.stdout?.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}) before it started`));
    });
  }).catch(async (error: Error) => {
    await proc.stop(1000);
    throw new Error(`${error.message}. Its output:\n${tail}`);
  });
  proc.apiUrl = /API (http:\/\/[^\s,]+)/.exec(started)?.[1];
  proc.gatewayUrl = /UI (http:\/\/[^\s,]+)/.exec(started)?.[1];
  return proc;
}

/** Runs a one-shot `herald` command (e.g. `keys rotate`) and returns its exit code and output. */
export async function runHerald(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; output: string }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? 1)));
  return { code, output };
}

/**
 * The environment of a `herald start` with the roles `npm start` runs bar the gateway, on
 * `dataDir`, its API on a free port, `admin` bootstrapped, quiet logs; `extra` adds or overrides.
 */
export function oneProcessEnv(
  dataDir: string,
  admin: { email: string; password: string },
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    HERALD_DATA_DIR: dataDir,
    HERALD_ROLES: 'auth,api,worker',
    HERALD_API_PORT: '0',
    HERALD_ADMIN_EMAIL: admin.email,
    HERALD_ADMIN_PASSWORD: admin.password,
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

/**
 * Signs in at a running Herald with a password; returns the access token. `path` is the login
 * route of that port: `/auth/login` on the API, `/api/session` on the gateway.
 */
export async function passwordLogin(
  baseUrl: string,
  user: { email: string; password: string },
  path = '/auth/login',
): Promise<string> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(user),
  });
  if (response.status !== 200) {
    throw new Error(`login at ${baseUrl}${path} answered ${response.status}: ${await response.text()}`);
  }
  return ((await response.json()) as { access_token: string }).access_token;
}
