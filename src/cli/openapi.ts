import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/config.ts';
import { buildApi, closeDeps, createDeps } from '../main.ts';

export const OPENAPI_HELP = `Usage: herald openapi

Prints the OpenAPI 3.1 document the API serves at GET /docs/json, without starting anything;
its servers entry is HERALD_PUBLIC_URL.

Examples:
  herald openapi > openapi.json
  HERALD_PUBLIC_URL=https://notify.example.com herald openapi | npx @redocly/cli lint /dev/stdin`;

/** `herald openapi`: prints the OpenAPI document (servers from HERALD_PUBLIC_URL) and exits. */
export async function runOpenapi(_args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  console.log(JSON.stringify(await openapiDocument(env), null, 2));
  return 0;
}

/**
 * The OpenAPI document Herald serves at `GET /docs/json`, built without serving anything: the
 * API of every role over a throwaway SQLite store, so that the environment's database is never
 * touched. `herald openapi` prints it; the typed client is generated from it.
 */
export async function openapiDocument(env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-openapi-'));
  try {
    const own = { ...env };
    for (const name of ['DATABASE_URL', 'HERALD_ADMIN_EMAIL', 'HERALD_ADMIN_PASSWORD']) delete own[name];
    const config = loadConfig({
      ...own,
      HERALD_DATA_DIR: dataDir,
      HERALD_ROLES: 'auth,api',
      LOG_LEVEL: 'silent',
    });
    const deps = await createDeps(config);
    const app = await buildApi(deps);
    try {
      return (await app.inject({ method: 'GET', url: '/docs/json' })).json();
    } finally {
      await app.close();
      await closeDeps(deps);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
