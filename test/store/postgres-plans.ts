// Every statement the PostgreSQL store sent while the store suites ran is planned by PostgreSQL
// itself, and none may read a whole table that grows with traffic: on the shared database of a
// scaled-out Herald such a read costs every process and every tenant as long as the table is
// long. The statements are collected as they are sent (ConnectOptions.onStatement) and each is
// planned once as a generic plan (parameters unknown, as a prepared statement's is after a few
// runs). The test database is empty, and on empty tables reading everything looks cheap, so
// sequential scans, bitmap scans, hash joins and merge joins are priced out: rows are then reached
// through an index, in its order. What is flagged:
// - a sequential scan left in a plan: no index serves the statement;
// - an index read with no equality in its condition (none, or only a range) that no LIMIT cuts
//   short, or whose rows are sorted or aggregated before the LIMIT: the index may be read in full.
// A partial index read in full reads the rows its condition holds (the queue's ready rows, say).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import postgres from 'postgres';
import { GROWING_TABLES } from './growing-tables.ts';

/** A plan node as `EXPLAIN (FORMAT JSON)` gives it. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Filter?: string;
  Plans?: PlanNode[];
}

const SCANS = new Set(['Seq Scan', 'Index Scan', 'Index Only Scan', 'Bitmap Index Scan']);
/** Nodes that read all of their input before giving a row: a LIMIT above them bounds nothing. */
const BLOCKING = new Set(['Sort', 'Aggregate', 'Hash', 'Materialize', 'SetOp', 'WindowAgg', 'Gather Merge']);

/**
 * The whole-table reads in a plan: a sequential scan of a growing table, or an index scan of
 * one with no condition that is not cut short by a LIMIT (a LIMIT over an index read in order
 * reads as many entries as it returns).
 */
export function wholeTableReads(node: PlanNode, partial: ReadonlySet<string>, bounded = false): string[] {
  const type = node['Node Type'];
  const relation = node['Relation Name'] ?? tableOfIndex(node['Index Name']);
  const found: string[] = [];
  if (SCANS.has(type) && relation && GROWING_TABLES.includes(relation)) {
    if (type === 'Seq Scan') found.push(`Seq Scan on ${relation}`);
    else if (!bounded && !partial.has(node['Index Name'] ?? '') && !/ = /.test(node['Index Cond'] ?? ''))
      found.push(`${type} of ${node['Index Cond'] ? 'a range of' : 'all of'} ${node['Index Name']}`);
  }
  const below = type === 'Limit' ? true : BLOCKING.has(type) ? false : bounded;
  for (const child of node.Plans ?? []) found.push(...wholeTableReads(child, partial, below));
  return found;
}

/** Bitmap index scans name only their index; Herald's index names start with their table's. */
function tableOfIndex(index: string | undefined): string | undefined {
  return index ? GROWING_TABLES.find((table) => index.startsWith(`${table}_`)) : undefined;
}

/**
 * Statements that may read a growing table whole, each with its reason.
 */
const BOUNDED: RegExp[] = [
  // An operator's `GET /admin/users` and `/admin/clients` answer every account (API.md §2: not
  // paginated); they read what they return.
  /^SELECT \* FROM (users|clients) ORDER BY created_at, id$/,
  // The pruners delete every row past its time (login tries, early provider reports, webhook
  // replay tokens): they read the rows they delete, not the table.
  /^DELETE FROM (auth_attempts|pending_reports|webhook_tokens) WHERE (at|received_at|seen_at) < \$1$/,
  // Sent by test/store/status-log.suite.ts itself, not by the store.
  /^DELETE FROM notification_events$/,
];

/**
 * Registers the check: `statements` is filled while the suites before it run; `database` makes a
 * database migrated to the current schema and gives its URL.
 */
export function statementPlansSuite(statements: ReadonlySet<string>, database: () => Promise<string>): void {
  describe('PostgreSQL statement plans', () => {
    it('read no growing table whole', async () => {
      const sql = postgres(await database(), { max: 1, onnotice: () => undefined });
      try {
        const [row] = await sql<{ server_version_num: string }[]>`SHOW server_version_num`;
        const version = row?.server_version_num;
        // GENERIC_PLAN came with PostgreSQL 16; the embedded server the tests start is 18.
        if (Number(version) < 160000) {
          assert.fail(`PostgreSQL ${version} cannot plan a statement without its parameters`);
        }
        const partial = new Set(
          (
            await sql<
              { indexname: string }[]
            >`SELECT indexname FROM pg_indexes WHERE indexdef LIKE '% WHERE %'`
          ).map((row) => row.indexname),
        );
        const offenders: string[] = [];
        let planned = 0;
        for (const source of statements) {
          if (!/^\s*(SELECT|UPDATE|DELETE|INSERT|WITH)\b/i.test(source)) continue;
          const text = source.replace(/\s+/g, ' ').trim();
          const plan = await sql.begin(async (tx) => {
            await tx`SET LOCAL enable_seqscan = off`;
            await tx`SET LOCAL enable_hashjoin = off`;
            await tx`SET LOCAL enable_mergejoin = off`;
            await tx`SET LOCAL enable_bitmapscan = off`;
            const rows = await tx.unsafe(`EXPLAIN (GENERIC_PLAN, FORMAT JSON) ${source}`);
            return (rows[0] as unknown as { 'QUERY PLAN': Array<{ Plan: PlanNode }> })['QUERY PLAN'][0]?.Plan;
          });
          planned++;
          const reads = plan ? wholeTableReads(plan, partial) : [];
          if (reads.length > 0 && !BOUNDED.some((b) => b.test(text)))
            offenders.push(`${reads.join('; ')}: ${text}`);
        }
        assert.ok(planned > 100, `only ${planned} statements were planned`);
        assert.deepEqual(offenders, []);
      } finally {
        await sql.end({ timeout: 5 });
      }
    });
  });
}
