/**
 * What the PostgreSQL profiles (bench/pg-profile.ts, bench/pg-fan-out-profile.ts,
 * bench/pg-workflow-turns.ts) start and read from the server's statistics: the profiled server,
 * the postmaster, the rows each table gained or changed, the WAL records by kind, and a
 * statement's kind.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import type postgres from 'postgres';
import { type PostgresServer, startPostgres } from '../../test/helpers/postgres.ts';

/**
 * A durable embedded PostgreSQL that counts every statement (pg_stat_statements; each database
 * still needs `CREATE EXTENSION`). With `plansTo`, auto_explain appends to that file the plans
 * (EXPLAIN ANALYZE, BUFFERS, WAL) of statements that ran `planMs` or longer. `settings` adds
 * server settings.
 */
export function startProfiledPostgres(options: {
  plansTo?: string;
  planMs: number;
  settings?: string[];
}): Promise<PostgresServer> {
  const { plansTo, planMs, settings = [] } = options;
  return startPostgres({
    durable: true,
    settings: [
      'shared_preload_libraries=pg_stat_statements,auto_explain',
      'pg_stat_statements.track=all',
      ...settings,
      ...(plansTo
        ? [
            `auto_explain.log_min_duration=${planMs}ms`,
            'auto_explain.log_analyze=on',
            'auto_explain.log_buffers=on',
            'auto_explain.log_wal=on',
          ]
        : []),
    ],
    env: {},
    ...(plansTo ? { onLog: (line: string) => appendFileSync(plansTo, line) } : {}),
  });
}

/** The postmaster's pid: the parent of the backend serving `sql`'s connection (/proc). */
export async function postmasterOf(sql: postgres.Sql): Promise<number> {
  const [row] = await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
  const stat = readFileSync(`/proc/${row?.pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

interface TableRow {
  relname: string;
  ins: number;
  upd: number;
  hot: number;
  del: number;
}

/** Each table's rows inserted, updated (of which HOT) and deleted so far (pg_stat_user_tables). */
export function tableRows(sql: postgres.Sql): Promise<TableRow[]> {
  return sql<TableRow[]>`SELECT relname, n_tup_ins::int AS ins, n_tup_upd::int AS upd,
    n_tup_hot_upd::int AS hot, n_tup_del::int AS del FROM pg_stat_user_tables`;
}

/** One line for each table whose rows changed between `before` and `after`, each count through `per`. */
export function rowsChanged(
  before: readonly TableRow[],
  after: readonly TableRow[],
  per: (n: number) => number,
  digits: number,
): string[] {
  const lines: string[] = [];
  for (const row of after) {
    const old = before.find((b) => b.relname === row.relname) ?? { ins: 0, upd: 0, hot: 0, del: 0 };
    const d = (k: 'ins' | 'upd' | 'hot' | 'del') => per(Number(row[k]) - Number(old[k])).toFixed(digits);
    if (Number(row.ins) + Number(row.upd) + Number(row.del) === old.ins + old.upd + old.del) continue;
    lines.push(`  ${row.relname}: ${d('ins')} ins, ${d('upd')} upd (${d('hot')} HOT), ${d('del')} del`);
  }
  return lines;
}

/**
 * Resets the statements' (pg_stat_statements), the WAL's and the I/O's statistics, and reads
 * where the server stands: each table's rows, the database's commits, the WAL's insert position.
 */
export async function startCounting(
  sql: postgres.Sql,
): Promise<{ rows: TableRow[]; commits: number; lsn: string }> {
  await sql`SELECT pg_stat_statements_reset()`;
  await sql`SELECT pg_stat_reset_shared('wal')`;
  await sql`SELECT pg_stat_reset_shared('io')`;
  const rows = await tableRows(sql);
  const [db] = await sql<{ commits: number }[]>`
    SELECT xact_commit::bigint AS commits FROM pg_stat_database WHERE datname = current_database()`;
  const [wal] = await sql<{ lsn: string }[]>`SELECT pg_current_wal_insert_lsn()::text AS lsn`;
  return { rows, commits: Number(db?.commits), lsn: wal?.lsn ?? '0/0' };
}

/**
 * Every WAL record between two positions, by kind (pg_walinspect), most first by `order`: the
 * whole server's (other databases are idle). A B-tree INSERT_LEAF is one index entry written.
 */
export function walByKind(
  sql: postgres.Sql,
  from: string,
  to: string,
  order: 'count' | 'bytes',
): Promise<{ kind: string; n: number; bytes: number }[]> {
  return sql<{ kind: string; n: number; bytes: number }[]>`
    SELECT "resource_manager/record_type" AS kind, count::bigint AS n, combined_size::bigint AS bytes
      FROM pg_get_wal_stats(${from}::pg_lsn, ${to}::pg_lsn, true)
     WHERE count > 0 ORDER BY ${sql.unsafe(order === 'count' ? 'count' : 'combined_size')} DESC`;
}

/**
 * A statement's kind: its verb and the table it writes or first reads (`INSERT notification_events`,
 * `SELECT notifications`, `BEGIN`). A data-modifying CTE counts as the table it updates.
 */
export function statementKind(query: string): string {
  const text = query.replace(/\s+/g, ' ').trim();
  const verb = /^(\w+)/.exec(text)?.[1]?.toUpperCase() ?? '?';
  // `FOR UPDATE SKIP LOCKED` is a lock, not a write: an UPDATE names its table then SET.
  const write = /\b(INSERT INTO|DELETE FROM) (\w+)|\bUPDATE (\w+) (?:\w+ )?SET\b/i.exec(text);
  if (write?.[1]) return `${write[1].split(' ')[0]?.toUpperCase()} ${write[2]}`;
  if (write) return `UPDATE ${write[3]}`;
  const from = /\bFROM (\w+)/i.exec(text);
  if (verb === 'SELECT' || verb === 'WITH') return `SELECT ${from?.[1] ?? ''}`.trim();
  return verb;
}
