import type { PostgresServer } from '../../test/helpers/postgres.ts';
import { Unavailable } from './api.ts';
import { progress } from './log.ts';

let server: Promise<PostgresServer> | undefined;

/** The store areas the ingest and dispatch scenarios need from the PostgreSQL adapter. */
const NEEDED = ['auth', 'notifications', 'queue', 'sandbox'] as const;

async function checkAdapter(url: string): Promise<void> {
  const { createPostgresStore } = await import('../../src/store/postgres/index.ts');
  const store = (await createPostgresStore(url)) as unknown as Record<string, unknown> & {
    close(): Promise<void>;
  };
  try {
    const missing = NEEDED.filter((area) => !store[area]);
    if (missing.length) {
      throw new Unavailable(`the PostgreSQL store has no ${missing.join(', ')} area yet`);
    }
  } finally {
    await store.close();
  }
}

/**
 * A fresh database on the bench's PostgreSQL server: the one in HERALD_TEST_DATABASE_URL, or an
 * embedded one started on first use (test/helpers/postgres.ts, the PostgreSQL engineer's
 * helper). Throws Unavailable while the PostgreSQL adapter lacks an area the scenarios need.
 * The embedded server is started durable (fsync and synchronous_commit on), like SQLite's FULL sync,
 * so the two stores' figures compare.
 */
export async function postgresDatabase(): Promise<string> {
  if (!server) {
    progress('postgres: starting the embedded PostgreSQL server');
    const { startPostgres } = await import('../../test/helpers/postgres.ts');
    server = startPostgres({ durable: true });
  }
  const url = await (await server).createDatabase('herald_bench');
  await checkAdapter(url);
  return url;
}

/** Stops the PostgreSQL server if the bench started one (dropping its databases). */
export async function stopPostgres(): Promise<void> {
  if (!server) return;
  const started = await server.catch(() => undefined);
  server = undefined;
  await started?.stop();
}

/** The process layout and which PostgreSQL the figures come from (and how durable): said next to them. */
export function postgresNote(workers: number): string {
  const layout = `1 auth, 2 api (HERALD_JWKS_URL) and ${workers} worker process${workers === 1 ? '' : 'es'}; `;
  return (
    layout +
    (process.env.HERALD_TEST_DATABASE_URL
      ? 'PostgreSQL from HERALD_TEST_DATABASE_URL'
      : 'embedded PostgreSQL, durable (fsync and synchronous_commit on)')
  );
}
