/**
 * `node --import tsx bench/pg-profile.ts [count] [workers] [--callback] [--batch=N]`: what
 * PostgreSQL does for one notification accepted (POST /notifications, 64 connections over two API
 * processes; with --batch=N, POST /notifications/batch of N items) and delivered to the sandbox,
 * on the scale-out layout of bench/lib/deploy.ts: every statement from pg_stat_statements (calls,
 * rows, time, WAL) per notification and the same summed by kind, the statements sent (each a
 * round trip unless pipelined), the WAL and commits of the whole server, the WAL records by kind
 * from pg_walinspect (a B-tree INSERT_LEAF is one index entry written), the rows each table
 * gained or changed, and PostgreSQL's CPU (every process of the server, from /proc) per
 * notification. With --callback, one status callback for every DELIVERED (the callback outbox and
 * its sender) is on the path too. PG_PROFILE_SETUP=<SQL> runs that SQL once Herald has migrated
 * (e.g. a fillfactor or an index tried without a migration). docs/scale-out.md quotes its output.
 */
import postgres from 'postgres';
import { type Api, outstanding, queues } from './lib/api.ts';
import { batch, notification } from './lib/bodies.ts';
import { type Receiver, receiverEnv, startReceiver } from './lib/callback-receiver.ts';
import { deploy } from './lib/deploy.ts';
import { acceptOrShed, runLoad } from './lib/load.ts';
import {
  postmasterOf,
  rowsChanged,
  startCounting,
  startProfiledPostgres,
  statementKind,
  tableRows,
  walByKind,
} from './lib/pg-stats.ts';
import { cpuByThread, perThreadShare, runScript, serverCpuMs } from './lib/proc.ts';

const args = process.argv.slice(2);
const numbers = args.filter((a) => /^\d+$/.test(a)).map(Number);
const count = numbers[0] ?? 20_000;
const workers = numbers[1] ?? 1;
const withCallback = args.includes('--callback');
const batchSize = Number(args.find((a) => a.startsWith('--batch='))?.slice('--batch='.length) ?? 0);
const plans = process.env.PG_PROFILE_PLANS;
/** PG_PROFILE_SETUP=<SQL>: run once Herald has migrated, before the warm-up (a schema change tried without a migration). */
const setup = process.env.PG_PROFILE_SETUP;

async function drained(api: Api): Promise<void> {
  for (;;) {
    if (outstanding(await queues(api)) === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function callbacksDone(sql: postgres.Sql, expected: number): Promise<void> {
  for (;;) {
    // A message whose first attempt succeeds is recorded as its attempt only, never in the outbox.
    const [row] = await sql<[{ n: number }]>`SELECT count(*)::int AS n FROM callback_attempts
      WHERE status_code BETWEEN 200 AND 299`;
    if ((row?.n ?? 0) >= expected) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function main() {
  const server = await startProfiledPostgres({
    // PG_PROFILE_PLANS=<file>: the plans of statements over 3 ms, written there.
    plansTo: plans,
    planMs: 3,
    // Planning too: a statement planned again at each execution spends CPU its execution time omits.
    settings: ['pg_stat_statements.track_planning=on'],
  });
  let receiver: Receiver | undefined;
  const url = await server.createDatabase('herald_profile');
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
  await sql`CREATE EXTENSION IF NOT EXISTS pg_walinspect`;
  const postmaster = await postmasterOf(sql);
  if (withCallback) receiver = await startReceiver();
  const herald = await deploy('postgres', {
    databaseUrl: url,
    workers,
    ...(receiver ? { env: receiverEnv(receiver, 50_000) } : {}),
  });
  try {
    if (setup) await sql.unsafe(setup);
    if (receiver) {
      const created = await herald.api.request('POST', '/callbacks', {
        url: receiver.url,
        events: ['DELIVERED'],
      });
      if (created.status !== 201) throw new Error(`POST /callbacks: ${created.status}`);
    }
    const body = batchSize > 0 ? batch(batchSize) : JSON.stringify(notification('NORMAL'));
    const each = Math.max(1, batchSize);
    const load = (amount: number) =>
      runLoad({
        urls: herald.urls,
        method: 'POST',
        path: batchSize > 0 ? '/notifications/batch' : '/notifications',
        headers: { ...herald.api.auth, 'content-type': 'application/json' },
        body,
        connections: batchSize > 0 ? 8 : 64,
        amount: Math.ceil(amount / each),
        timeoutSeconds: 120,
      });
    const status = batchSize > 0 ? 207 : 201;
    // Warm up (plans cached, pools open), then count from zero.
    acceptOrShed(await load(Math.min(2000, count)), status, 'warm-up');
    await drained(herald.api);
    if (receiver) await callbacksDone(sql, Math.min(2000, count));
    await new Promise((r) => setTimeout(r, 1000));
    const counting = await startCounting(sql);
    const cpu0 = serverCpuMs(postmaster);
    const threads0 = herald.processes.map((p) => cpuByThread(p.pid));
    const started = performance.now();
    const result = acceptOrShed(await load(count), status, 'profile');
    const accepted = (result.requests - (result.shed ?? 0)) * each;
    await drained(herald.api);
    if (receiver) await callbacksDone(sql, Math.min(2000, count) + accepted);
    const seconds = (performance.now() - started) / 1000;
    const cpu = serverCpuMs(postmaster) - cpu0;
    const threads = herald.processes.map((p, i) =>
      perThreadShare(threads0[i] ?? {}, cpuByThread(p.pid), accepted),
    );
    await new Promise((r) => setTimeout(r, 1000)); // the stats collector's flush
    const per = (n: number) => n / accepted;
    const out: string[] = [];
    out.push(
      `${accepted} accepted${batchSize > 0 ? ` in batches of ${batchSize}` : ' one a request'} and delivered in ${seconds.toFixed(1)} s, ${workers} worker(s)${receiver ? ', one callback' : ''}`,
    );
    out.push(`PostgreSQL CPU: ${((cpu * 1000) / accepted).toFixed(0)} us per notification (${cpu} ms)`);
    const byThread = (i: number) =>
      Object.entries(threads[i] ?? {})
        .map(([thread, us]) => `${thread} ${us.toFixed(1)}`)
        .join(', ');
    out.push('Herald CPU per notification, by process and thread (us):');
    for (const [i, p] of herald.processes.entries())
      out.push(`  ${p.name.replace(/^herald-/, '')}: ${byThread(i)}`);
    const [db1] =
      await sql`SELECT xact_commit::int AS commits FROM pg_stat_database WHERE datname = current_database()`;
    out.push(`commits: ${per(Number(db1?.commits) - counting.commits).toFixed(3)} per notification`);
    const [wal] =
      await sql`SELECT wal_records::bigint AS records, wal_fpi::bigint AS fpi, wal_bytes::bigint AS bytes FROM pg_stat_wal`;
    const io = await sql`SELECT context, writes::bigint AS writes, fsyncs::bigint AS fsyncs FROM pg_stat_io
      WHERE object = 'wal' AND (writes > 0 OR fsyncs > 0)`;
    const fsyncs = io.reduce((sum, r) => sum + Number(r.fsyncs ?? 0), 0);
    out.push(
      `WAL: ${per(Number(wal?.records)).toFixed(1)} records, ${per(Number(wal?.bytes)).toFixed(0)} bytes, ` +
        `${per(Number(wal?.fpi)).toFixed(3)} full pages, ${per(fsyncs).toFixed(3)} fsyncs per notification`,
    );
    const [lsn1] = await sql<[{ lsn: string }]>`SELECT pg_current_wal_flush_lsn()::text AS lsn`;
    const records = await walByKind(sql, counting.lsn, lsn1?.lsn ?? '0/0', 'count');
    const entries = records
      .filter((r) => /^Btree\/INSERT_(LEAF|POST)$/.test(r.kind))
      .reduce((sum, r) => sum + Number(r.n), 0);
    out.push(
      `index entries written: ${per(entries).toFixed(2)} per notification (B-tree INSERT_LEAF and INSERT_POST records)`,
    );
    out.push('WAL records by kind per notification (count, bytes):');
    for (const r of records.slice(0, 14)) {
      out.push(`  ${r.kind}: ${per(Number(r.n)).toFixed(2)}, ${per(Number(r.bytes)).toFixed(0)} bytes`);
    }
    out.push('rows per notification (inserted, updated, of which HOT, deleted):');
    out.push(...rowsChanged(counting.rows, await tableRows(sql), per, 2));
    const statements =
      await sql`SELECT calls::bigint AS calls, plans::bigint AS plans, total_plan_time AS plan_ms,
      rows::bigint AS rows, total_exec_time AS ms,
      wal_records::bigint AS wal, shared_blks_dirtied::bigint AS dirtied, query FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
      ORDER BY total_exec_time + total_plan_time DESC LIMIT 25`;
    const all = await sql<{ calls: number; rows: number; ms: number; query: string }[]>`
      SELECT calls::bigint AS calls, rows::bigint AS rows, total_exec_time AS ms, query FROM pg_stat_statements
       WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`;
    const kinds = new Map<string, { calls: number; rows: number; ms: number }>();
    let sent = 0;
    for (const s of all) {
      const kind = statementKind(s.query);
      const k = kinds.get(kind) ?? { calls: 0, rows: 0, ms: 0 };
      k.calls += Number(s.calls);
      k.rows += Number(s.rows);
      k.ms += Number(s.ms);
      kinds.set(kind, k);
      sent += Number(s.calls);
    }
    // pg_stat_statements does not count COMMIT: one for each BEGIN.
    const begins = kinds.get('BEGIN')?.calls ?? 0;
    kinds.set('COMMIT', { calls: begins, rows: 0, ms: 0 });
    sent += begins;
    out.push(
      `statements sent (BEGIN and COMMIT included; each a round trip unless pipelined): ${per(sent).toFixed(3)} per notification`,
    );
    out.push('statements by kind (per notification: calls, rows; mean execution ms):');
    for (const [kind, k] of [...kinds].sort((a, b) => b[1].calls - a[1].calls)) {
      out.push(
        `  ${kind}: ${per(k.calls).toFixed(3)} calls, ${per(k.rows).toFixed(2)} rows, ${(k.calls > 0 ? k.ms / k.calls : 0).toFixed(3)} ms`,
      );
    }
    out.push(
      'statements (per 1000 notifications: calls, plans, rows, planning ms, execution ms, WAL records; then the text):',
    );
    for (const s of statements) {
      const k = (n: unknown) => ((Number(n) * 1000) / accepted).toFixed(1);
      const text = String(s.query).replace(/\s+/g, ' ').slice(0, 150);
      out.push(
        `  ${k(s.calls)} | ${k(s.plans)} | ${k(s.rows)} | ${k(s.plan_ms)} | ${k(s.ms)} | ${k(s.wal)} | ${text}`,
      );
    }
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await herald.stop();
    await receiver?.close();
    await sql.end();
    await server.stop();
  }
}

runScript(main);
