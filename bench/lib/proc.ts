import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from './tmp.ts';

/** The repository root (bench/lib/../..). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Peak and current resident memory of a process, in MB, from /proc/<pid>/status (Linux only). */
export function memoryOf(pid: number): { peakMb: number; currentMb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
    const peak = kb('VmHWM');
    const current = kb('VmRSS');
    if (!Number.isFinite(peak)) return undefined;
    return { peakMb: peak / 1024, currentMb: current / 1024 };
  } catch {
    return undefined;
  }
}

/** One thread of a process: its name (Linux's `comm`) and what it has had of the CPUs so far, in ms. */
export interface ThreadTimes {
  tid: string;
  name: string;
  runMs: number;
  waitMs: number;
}

/**
 * Each thread of a process and what it has had of the CPUs so far, in ms: time on a CPU, and time
 * runnable but waiting for one (Linux's /proc/<pid>/task/<tid>/schedstat; 'self' for this one).
 * A thread that ended is no longer listed.
 */
export function threadsOf(pid: number | 'self'): ThreadTimes[] {
  const threads: ThreadTimes[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      threads.push({ tid, name, runMs: (run ?? 0) / 1e6, waitMs: (wait ?? 0) / 1e6 });
    } catch {
      // The thread ended meanwhile.
    }
  }
  return threads;
}

/** What the threads of a process have had of the CPUs so far, in ms, summed (threadsOf). */
export function threadTimesOf(pid: number | 'self'): { runMs: number; waitMs: number } {
  let runMs = 0;
  let waitMs = 0;
  for (const thread of threadsOf(pid)) {
    runMs += thread.runMs;
    waitMs += thread.waitMs;
  }
  return { runMs, waitMs };
}

/**
 * Time on a CPU so far of each of a process's threads, in ms, summed by thread: `main` (the
 * thread whose id is the process's), Herald's threads by the name they give themselves
 * (os-thread.ts `nameOwnThread`: `herald-dispatch` counts as `dispatch`), and `other` for the
 * rest (libuv's pool, V8's compiler and garbage collector threads, which Node leaves `node`).
 * A thread that ended is no longer counted.
 */
export function cpuByThread(pid: number): Record<string, number> {
  const byName: Record<string, number> = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const run = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ', 1)[0]);
      const name = Number(tid) === pid ? 'main' : comm.startsWith('herald-') ? comm.slice(7) : 'other';
      byName[name] = (byName[name] ?? 0) + run / 1e6;
    } catch {
      // The thread ended meanwhile.
    }
  }
  return byName;
}

/** What each thread (`cpuByThread`'s names) had between `before` and `after`, in µs per `count`. */
export function perThreadShare(
  before: Record<string, number>,
  after: Record<string, number>,
  count: number,
): Record<string, number> {
  const share: Record<string, number> = {};
  for (const [name, ms] of Object.entries(after)) share[name] = ((ms - (before[name] ?? 0)) * 1000) / count;
  return share;
}

/** Write system calls of a process so far, all its threads (/proc/<pid>/io `syscw`; Linux only). */
export function writeCallsOf(pid: number): number {
  return Number(/^syscw: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? Number.NaN);
}

const TICK_MS = 1000 / 100; // USER_HZ is 100 on Linux

/** CPU ms so far of one process (utime + stime, /proc/<pid>/stat), or undefined once it is gone. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime, stime
  } catch {
    return undefined;
  }
}

/** The PostgreSQL server's processes: the postmaster and every process it started (backends, WAL writer...). */
export function serverPids(postmaster: number): number[] {
  const pids = [postmaster];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster)
        pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** CPU ms so far of the server: the postmaster and every process it started. */
export function serverCpuMs(postmaster: number): number {
  return serverPids(postmaster).reduce((sum, pid) => sum + (processCpuMs(pid) ?? 0), 0);
}

/** The machine's idle and total CPU time so far, in ms of one core (/proc/stat). */
export function machineCpuMs(): { idle: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  // idle and iowait; the sum of every state.
  return { idle: ((ticks[3] ?? 0) + (ticks[4] ?? 0)) * 10, total: ticks.reduce((a, b) => a + b, 0) * 10 };
}

/** A child process whose output is kept (last lines) for error messages and read line by line. */
export interface Child {
  process: ChildProcess;
  pid: number;
  /** The last lines of stdout and stderr, for error messages. */
  tail(): string;
  /** Resolves with the first stdout line matching `pattern`, rejects if the child exits first. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
  /** Calls `listener` with every further stdout line. */
  onLine(listener: (line: string) => void): void;
  /** Resolves with all of stdout once the child exits with code 0; rejects otherwise. */
  done(): Promise<string>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const live = new Set<ChildProcess>();

/** Kills every child still running (the bench is exiting: no Herald may outlive it). */
export function killChildren(): void {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
}

/** Spawns `node --import tsx <script> ...args` (or plain node args) from the repository root. */
export function spawnNode(args: string[], env: NodeJS.ProcessEnv, name: string): Child {
  return spawnProgram(
    process.execPath,
    name.startsWith('herald') && process.env.BENCH_PROF
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF_DIR ?? '/tmp/prof'}`, ...args]
      : args,
    env,
    name,
  );
}

/** Spawns `command` (a program on the PATH, e.g. redis-server) from the repository root. */
export function spawnProgram(command: string, args: string[], env: NodeJS.ProcessEnv, name: string): Child {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`could not start ${name}`);
  live.add(child);
  child.once('exit', () => live.delete(child));
  const lines: string[] = [];
  let stdout = '';
  let partial = '';
  const listeners = new Set<(line: string) => void>();
  const keep = (line: string) => {
    lines.push(line);
    if (lines.length > 40) lines.shift();
  };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    // Only the output before the first matched line matters for readiness; cap the rest.
    if (stdout.length > 64 * 1024 * 1024) stdout = stdout.slice(-1024 * 1024);
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      keep(line);
      for (const listener of listeners) listener(line);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    for (const line of chunk.split('\n')) if (line) keep(line);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const tail = () => lines.slice(-15).join('\n');
  return {
    process: child,
    pid: child.pid,
    tail,
    waitForLine(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`${name} did not get ready within ${timeoutMs} ms:\n${tail()}`));
        }, timeoutMs);
        const check = (line: string) => {
          const match = pattern.exec(line);
          if (!match) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve(match);
        };
        listeners.add(check);
        void exited.then((code) => {
          clearTimeout(timer);
          if (listeners.delete(check)) reject(new Error(`${name} exited (code ${code}):\n${tail()}`));
        });
      });
    },
    onLine(listener) {
      listeners.add(listener);
    },
    async done() {
      const code = await exited;
      if (code !== 0) throw new Error(`${name} exited with code ${code}:\n${tail()}`);
      return stdout;
    },
    async stop(graceMs = 20_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * The environment every child starts from: only what Node needs and none of the caller's Herald
 * settings, except HERALD_DISPATCH_THREAD (`=false npm run bench` measures the one-thread layout).
 */
export function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'NODE_EXTRA_CA_CERTS', 'HERALD_DISPATCH_THREAD']) {
    if (process.env[name] !== undefined) env[name] = process.env[name];
  }
  return env;
}

let specDir: string | undefined;

/**
 * Runs a bench child script with `spec` as JSON in a temporary file (argv[2] is its path: a
 * 1000-notification batch body is larger than one command-line argument may be), collecting the
 * "RESULT <json>" line it prints and passing "PROGRESS <n>" lines to `onProgress`.
 */
export async function runChild<T>(
  script: string,
  spec: unknown,
  onProgress?: (n: number) => void,
): Promise<T> {
  specDir ??= tempDir('specs');
  const file = join(specDir, `${randomBytes(6).toString('hex')}.json`);
  writeFileSync(file, JSON.stringify(spec));
  try {
    const child = spawnNode(['--import', 'tsx', script, file], baseEnv(), script);
    let result: T | undefined;
    child.onLine((line) => {
      if (line.startsWith('RESULT ')) result = JSON.parse(line.slice(7)) as T;
      else if (line.startsWith('PROGRESS ') && onProgress) onProgress(Number(line.slice(9)));
    });
    await child.done();
    if (result === undefined) throw new Error(`${script} printed no result:\n${child.tail()}`);
    return result;
  } finally {
    rmSync(file, { force: true });
  }
}

/** Reads the spec a parent passed to this child script with runChild. */
export function readSpec<T>(): T {
  const file = process.argv[2];
  if (!file) throw new Error('usage: node --import tsx <script> <spec.json>');
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

/** Runs a stand-alone bench script's `main`: exit 0 when done, else its error and no child left behind. */
export function runScript(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      killChildren();
      process.exit(1);
    },
  );
}
