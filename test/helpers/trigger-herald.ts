// A real Herald (auth and api in this process) on SQLite or PostgreSQL for the workflow trigger
// tests: ten recipients (u0 to u9), a workflow `w` of one hour's delay, triggers over HTTP, and a
// connection of its own to read what is committed, as another process would.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { type Herald, startHerald } from '../../src/main.ts';
import { tokenFor } from './auth.ts';
import { testConfig } from './config.ts';
import { sharedPostgres, stopSharedPostgres } from './postgres.ts';

export const PEOPLE = Array.from({ length: 10 }, (_, i) => `u${i}`);

/** A trigger's answer as a client reads it. */
export interface Answer {
  status: number;
  headers: Headers;
  body: { triggerId: string; runs: Array<{ recipientId: string; runId: string }>; code?: string };
}

export interface TriggerHerald {
  herald: Herald;
  /** A trigger of `workflow` (`w` unless named). */
  trigger(body: object, key?: string, workflow?: string): Promise<Answer>;
  /** Rows read through another connection (`?` placeholders on both databases). */
  read(sql: string, ...params: string[]): Promise<Array<Record<string, unknown>>>;
  /** The `n` column of the first row read. */
  count(sql: string, ...params: string[]): Promise<number>;
  close(): Promise<void>;
}

export async function startTriggerHerald(
  kind: 'sqlite' | 'postgres',
  database: string,
  env: Record<string, string> = {},
): Promise<TriggerHerald> {
  const vars: Record<string, string> = { ...env, HERALD_ROLES: 'auth,api' };
  let databaseUrl = '';
  if (kind === 'postgres') {
    databaseUrl = await (await sharedPostgres()).createDatabase(database);
    vars.DATABASE_URL = databaseUrl;
  }
  const herald = await startHerald(testConfig(vars));
  const token = await tokenFor(herald.deps, { role: 'admin' });
  const now = Date.now();
  await herald.store.recipients.put(
    'default',
    PEOPLE.map((id) => ({ id, profile: {} })),
    now,
  );
  await herald.store.workflows.put(
    'default',
    'w',
    { name: null, category: null, steps: [{ type: 'delay', for: 'PT1H' }] },
    now,
  );
  let read: TriggerHerald['read'];
  let closeReader: () => Promise<void>;
  if (kind === 'postgres') {
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
    read = async (text, ...params) => {
      let at = 0;
      return [
        ...(await sql.unsafe(
          text.replace(/\?/g, () => `$${++at}`),
          params,
        )),
      ];
    };
    closeReader = () => sql.end();
  } else {
    const db = new Database(join(herald.deps.config.dataDir, 'herald.db'), {
      readonly: true,
      fileMustExist: true,
    });
    read = async (text, ...params) => db.prepare(text).all(...params) as Array<Record<string, unknown>>;
    closeReader = async () => {
      db.close();
    };
  }
  return {
    herald,
    async trigger(body, key, workflow = 'w') {
      const response = await fetch(`${herald.apiUrl}/workflows/${workflow}/trigger`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          ...(key === undefined ? {} : { 'idempotency-key': key }),
        },
        body: JSON.stringify(body),
      });
      return {
        status: response.status,
        headers: response.headers,
        body: (await response.json()) as Answer['body'],
      };
    },
    read,
    count: async (text, ...params) => Number((await read(text, ...params))[0]?.n),
    async close() {
      await closeReader();
      await herald.close();
      if (kind === 'postgres') await stopSharedPostgres();
    },
  };
}
