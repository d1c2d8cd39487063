import { type Api, login, withBase } from './api.ts';
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

/** What to start. `roles` applies to SQLite's one process; PostgreSQL runs the scale-out layout. */
export interface DeploySpec {
  roles?: string;
  dataDir?: string;
  /** For PostgreSQL: worker processes beside the API processes (default 1). */
  workers?: number;
  /** For PostgreSQL: reuse this database (a restart); a fresh one by default. */
  databaseUrl?: string;
  /** Extra variables for every process started. */
  env?: Record<string, string>;
}

/** Says whether the worker drained in the benched process while ingest was measured. */
export function workerNote(apiOnly: boolean): string {
  return apiOnly
    ? 'HERALD_ROLES=auth,api: no worker in the process, nothing drains meanwhile'
    : "every role in one process (npm start's default): the worker drains to the sandbox meanwhile, on the same cores";
}

async function stopAll(processes: HeraldProcess[]): Promise<void> {
  await Promise.all(processes.map((p) => p.stop()));
}

/**
 * SQLite: one `herald start` process (every role but the gateway), as `npm start` runs it.
 * PostgreSQL: the layout of docs/scale-out.md on one database: one `auth` process, two `api`
 * processes verifying through its JWKS (HERALD_JWKS_URL), and `workers` worker processes.
 */
export async function deploy(
  engine: Engine,
  spec: DeploySpec = {},
): Promise<Deployment & { databaseUrl?: string }> {
  if (engine === 'sqlite') {
    const herald = await startHerald({ roles: spec.roles, dataDir: spec.dataDir, env: spec.env });
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
    const env = { ...spec.env, DATABASE_URL: databaseUrl };
    const auth = await startHerald({ roles: 'auth', env, name: 'herald-auth' });
    processes.push(auth);
    const apiEnv = { ...env, HERALD_JWKS_URL: `${auth.url}/.well-known/jwks.json` };
    const apis = await Promise.all(
      [1, 2].map((n) => startHerald({ roles: 'api', env: apiEnv, name: `herald-api-${n}` })),
    );
    processes.push(...apis);
    const workers = await Promise.all(
      Array.from({ length: spec.workers ?? 1 }, (_, n) =>
        startHerald({ roles: 'worker', env, name: `herald-worker-${n + 1}` }),
      ),
    );
    processes.push(...workers);
    // Log in at the auth process, then talk to the first API process with the token.
    const { token } = await login(auth.url);
    const api = withBase(token, apis[0]?.url as string);
    return {
      engine,
      urls: apis.map((p) => p.url),
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
