import { type Api, login } from './api.ts';
import { type HeraldProcess, startHerald } from './herald.ts';
import { postgresDatabase } from './postgres.ts';

/** Where a scenario runs: one Herald on embedded SQLite, or several on one PostgreSQL. */
export type Engine = 'sqlite' | 'postgres';

/** A running Herald deployment: its API addresses, an admin client, its processes. */
export interface Deployment {
  engine: Engine;
  /** Every API process's base URL; load is spread over them. */
  urls: string[];
  api: Api;
  processes: HeraldProcess[];
  stop(): Promise<void>;
}

/** What to start. `roles` applies to SQLite's one process; PostgreSQL runs its fixed layout. */
export interface DeploySpec {
  roles?: string;
  dataDir?: string;
  /** For PostgreSQL: run a worker (the first process gets the worker role). */
  worker?: boolean;
  /** For PostgreSQL: reuse this database (a restart); a fresh one by default. */
  databaseUrl?: string;
}

/** Says whether the worker drained in the benched process while ingest was measured. */
export function workerNote(options: { noWorker: boolean }): string {
  return options.noWorker
    ? 'no worker in the Herald process (--no-worker)'
    : "the worker runs in the same process (npm start's default) and drains meanwhile";
}

async function stopAll(processes: HeraldProcess[]): Promise<void> {
  await Promise.all(processes.map((p) => p.stop()));
}

/**
 * SQLite: one `herald start` process (every role but the gateway), as `npm start` runs it.
 * PostgreSQL: two API processes on one database, both with the auth role (the signing keys live
 * in the database, so a token from one verifies on the other); the first also runs the worker.
 */
export async function deploy(
  engine: Engine,
  spec: DeploySpec = {},
): Promise<Deployment & { databaseUrl?: string }> {
  if (engine === 'sqlite') {
    const herald = await startHerald({ roles: spec.roles, dataDir: spec.dataDir });
    try {
      const api = await login(herald.url);
      return { engine, urls: [herald.url], api, processes: [herald], stop: () => herald.stop() };
    } catch (error) {
      await herald.stop();
      throw error;
    }
  }
  const databaseUrl = spec.databaseUrl ?? (await postgresDatabase());
  const processes: HeraldProcess[] = [];
  try {
    const env = { DATABASE_URL: databaseUrl };
    const worker = spec.worker ?? true;
    processes.push(
      await startHerald({ roles: worker ? 'auth,api,worker' : 'auth,api', env, name: 'herald-pg-1' }),
    );
    processes.push(await startHerald({ roles: 'auth,api', env, name: 'herald-pg-2' }));
    const api = await login(processes[0]?.url as string);
    return {
      engine,
      urls: processes.map((p) => p.url),
      api,
      processes,
      databaseUrl,
      stop: () => stopAll(processes),
    };
  } catch (error) {
    await stopAll(processes);
    throw error;
  }
}
