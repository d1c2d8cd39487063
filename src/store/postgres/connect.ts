import postgres from 'postgres';

/** The postgres.js client the adapter uses; areas take it as their one dependency. */
export type Sql = postgres.Sql<{ bigint: number }>;
/**
 * What runs statements: the pool (Sql) or one transaction's handle (what `sql.begin` passes).
 * Helpers that run inside a caller's transaction take this, so both can be handed to them.
 */
export type Query = postgres.ISql<{ bigint: number }>;

/** Pool and timeout settings; the defaults suit one Herald process. */
export interface ConnectOptions {
  /** Pool size. Ingest group-commits and workers claim in batches, so a small pool is enough. */
  max?: number;
  /** Seconds an idle connection is kept. */
  idleTimeout?: number;
  /** Name shown in pg_stat_activity, to tell processes apart. */
  applicationName?: string;
  /** Called with each statement's text as it is sent (the statement-plan test collects them). */
  onStatement?: (text: string) => void;
  /**
   * Commits on these connections do not wait for the WAL flush (synchronous_commit = off, set
   * when each connects): for connections whose every commit may be lost by a crash of PostgreSQL.
   */
  asyncCommit?: boolean;
}

/**
 * Connects with BIGINT (int8) parsed as a JS number: Herald stores times as epoch ms and
 * sequences as BIGINT, all far below 2^53, and the SQLite adapter hands out numbers too.
 */
export function connectPostgres(url: string, options: ConnectOptions = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    idle_timeout: options.idleTimeout ?? 30,
    connect_timeout: 10,
    onnotice: () => undefined,
    ...(options.onStatement
      ? { debug: (_connection: number, text: string) => options.onStatement?.(text) }
      : {}),
    connection: {
      application_name: options.applicationName ?? 'herald',
      ...(options.asyncCommit ? { synchronous_commit: 'off' } : {}),
    },
    types: {
      bigint: {
        to: 20,
        from: [20],
        serialize: (value: number | bigint) => String(value),
        parse: (value: string) => Number(value),
      },
    },
  }) as unknown as Sql;
}
