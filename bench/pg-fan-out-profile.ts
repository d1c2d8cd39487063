/**
 * `node --import tsx bench/pg-fan-out-profile.ts [subscribers] [--workers=N] [--no-drain]`: what a
 * PostgreSQL broadcast's fan-out costs, by statement and by process. The `fan-out-postgres`
 * scenario's layout (bench/lib/deploy.ts: 1 auth, 2 api, `workers` worker processes, 2 unless
 * told) on a durable embedded PostgreSQL with pg_stat_statements, pg_walinspect and auto_explain
 * (`EXPLAIN (ANALYZE, BUFFERS, WAL)` of every statement over 100 ms, kept when it is the chunk's
 * INSERT ... SELECT); a topic of `subscribers` (200,000 unless told) seeded as the scenario seeds
 * it (`PG_PROFILE_SETUP=<SQL>` runs SQL before the seeding: a schema change tried without a
 * migration); one LOW broadcast, read through `GET /broadcasts/{id}` every second as the scenario
 * reads it, until DONE. `--no-drain` pauses the queues first, so the
 * workers only fan out (the made notifications wait; what the drain adds is the difference).
 *
 * It prints per notification made: the statements by kind and the top statements (calls, rows,
 * time, WAL records and bytes), the server's WAL (records, bytes, full pages, fsyncs) and its
 * records by kind, the rows each table gained or changed, the bytes of each index of
 * notifications; the CPU of every PostgreSQL process (by backend type, and each client backend by
 * the Herald process it serves) and of each Herald process by thread (/proc); and what each
 * worker's connections were doing, sampled from pg_stat_activity every 20 ms (which statement,
 * which wait). Decision record 0058 quotes it.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import postgres from 'postgres';
import { startPostgres } from '../test/helpers/postgres.ts';
import { setPaused } from './lib/api.ts';
import { deploy } from './lib/deploy.ts';
import {
  postmasterOf,
  rowsChanged,
  startCounting,
  statementKind,
  tableRows,
  walByKind,
} from './lib/pg-stats.ts';
import { cpuByThread, processCpuMs, runScript, serverPids } from './lib/proc.ts';
import { seedPostgres, TOPIC } from './scenarios/fan-out.ts';

const args = process.argv.slice(2);
const option = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const subscribers = Number(args.find((a) => /^\d+$/.test(a)) ?? 200_000);
const workers = Number(option('workers') ?? 2);
const noDrain = args.includes('--no-drain');
/** PG_PROFILE_SETUP=<SQL>: run once Herald has migrated, before the seeding (a schema change tried without a migration). */
const setup = process.env.PG_PROFILE_SETUP;

/** The local TCP ports of a process's sockets: a client backend's `client_port` names its Herald process. */
function localPorts(pid: number): Set<number> {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m?.[1]) inodes.add(m[1]);
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    return new Set();
  }
  const ports = new Set<number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && inodes.has(f[9] as string))
        ports.add(Number.parseInt((f[1] ?? '').split(':')[1] ?? '', 16));
    }
  }
  return ports;
}

/** A statement's kind for the summary: the fan-out's statements by their role, the rest as pg-stats.ts names them. */
function kindOf(query: string): string {
  const text = query.replace(/\s+/g, ' ').trim();
  if (/INSERT INTO notifications .*broadcast_id/i.test(text)) return 'fan-out: INSERT ... SELECT (a range)';
  if (/INSERT INTO broadcast_ranges/i.test(text)) return 'fan-out: lease, INSERT broadcast_ranges';
  if (
    /FROM topic_subscribers WHERE tenant = \$\d+ AND topic_key = \$\d+ AND recipient_id > \$\d+ AND seq/i.test(
      text,
    )
  )
    return 'fan-out: lease, the range bounds';
  if (
    /broadcast_ranges|pg_advisory_xact_lock_shared|FROM broadcasts|UPDATE broadcasts|max\(seq\)|FROM topics/i.test(
      text,
    )
  )
    return 'fan-out: other (range, broadcast, topic rows)';
  if (/broadcast_id = \$\d+ GROUP BY status/i.test(text))
    return "API: a broadcast's counts (GET /broadcasts/{id})";
  return statementKind(text);
}

/** What a sampled backend was doing: the fan-out's statement kinds, the drain, or idle in a transaction. */
function activityOf(state: string, query: string, wait: string | null): string {
  if (state === 'idle') return 'idle';
  const kind = state.startsWith('idle in transaction')
    ? `idle in transaction after ${kindOf(query)}`
    : kindOf(query);
  return wait ? `${kind} [wait ${wait}]` : kind;
}

async function main() {
  // The server's log, for auto_explain's plans (a plan may arrive in several chunks).
  let serverLog = '';
  const server = await startPostgres({
    durable: true,
    settings: [
      'shared_preload_libraries=pg_stat_statements,auto_explain',
      'pg_stat_statements.track=all',
      'auto_explain.log_min_duration=100ms',
      'auto_explain.log_analyze=on',
      'auto_explain.log_buffers=on',
      'auto_explain.log_wal=on',
      'auto_explain.log_nested_statements=on',
    ],
    env: {},
    onLog: (chunk: string) => {
      if (serverLog.length < 4_000_000) serverLog += chunk;
    },
  });
  const url = await server.createDatabase('herald_fan_out_profile');
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
  await sql`CREATE EXTENSION IF NOT EXISTS pg_walinspect`;
  const postmaster = await postmasterOf(sql);
  const herald = await deploy('postgres', { databaseUrl: url, workers });
  try {
    const { api } = herald;
    if (setup) await sql.unsafe(setup);
    await seedPostgres(url, subscribers);
    await sql`CHECKPOINT`;
    if (noDrain && !(await setPaused(api, true)))
      throw new Error('no pause route: --no-drain cannot hold the drain');
    const named = herald.processes.map((p, i) => ({
      pid: p.pid as number,
      name: i === 0 ? 'auth' : i <= 2 ? `api-${i}` : `worker-${i - 2}`,
    }));
    const portOwner = new Map<number, string>();
    const mapPorts = () => {
      for (const p of named) for (const port of localPorts(p.pid)) portOwner.set(port, p.name);
    };
    const counting = await startCounting(sql);
    const pgCpu0 = new Map(serverPids(postmaster).map((p) => [p, processCpuMs(p) ?? 0]));
    const heraldCpu0 = named.map((p) => cpuByThread(p.pid));
    const started = performance.now();
    const accepted = await api.request('POST', '/broadcasts', {
      topic: TOPIC,
      channel: 'email',
      priority: 'LOW',
      content: { subject: 'News for {{ who }}', text: 'Hello' },
      variables: { who: 'everyone' },
    });
    if (accepted.status !== 201) throw new Error(`POST /broadcasts: ${accepted.status}`);
    const id = (accepted.body as { broadcastId: string }).broadcastId;
    // Sample every backend's activity until DONE, on a connection of its own.
    const sampler = postgres(url, { max: 1, onnotice: () => undefined });
    const samples = new Map<string, Map<string, number>>();
    const backendOf = new Map<number, { type: string; app: string; port: number | null }>();
    let done = false;
    let polls = 0;
    let made = 0;
    const poll = (async () => {
      let lastCheck = 0;
      let lastView = 0;
      while (!done) {
        const rows = await sampler<
          {
            pid: number;
            type: string;
            app: string;
            port: number | null;
            state: string | null;
            query: string;
            wait: string | null;
          }[]
        >`SELECT pid, backend_type AS type, application_name AS app, client_port AS port, state, query,
            CASE WHEN wait_event IS NULL THEN NULL ELSE wait_event_type || ':' || wait_event END AS wait
          FROM pg_stat_activity WHERE pid <> pg_backend_pid()`;
        for (const r of rows) {
          backendOf.set(r.pid, { type: r.type, app: r.app, port: r.port });
          if (r.type !== 'client backend' || r.port === null || !r.state) continue;
          if (!portOwner.has(r.port)) mapPorts();
          const owner = portOwner.get(r.port) ?? r.app;
          if (!owner.startsWith('worker')) continue;
          const byWhat = samples.get(owner) ?? new Map<string, number>();
          const what = activityOf(r.state, r.query, r.wait);
          byWhat.set(what, (byWhat.get(what) ?? 0) + 1);
          samples.set(owner, byWhat);
        }
        polls++;
        // As the scenario (and the UI) does: GET /broadcasts/{id} every second, whose counts are a
        // read of the broadcast's index entries on the API's connection.
        if (performance.now() - lastView > 1000) {
          lastView = performance.now();
          const view = await api.request('GET', `/broadcasts/${id}`);
          if (view.status !== 200) throw new Error(`GET /broadcasts/${id}: ${view.status}`);
        }
        if (performance.now() - lastCheck > 500) {
          lastCheck = performance.now();
          const [b] = await sampler<{ status: string; created: number }[]>`
            SELECT status, created::int AS created FROM broadcasts WHERE id = ${id}`;
          made = Number(b?.created ?? 0);
          if (b?.status === 'DONE') done = true;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await poll;
    const seconds = (performance.now() - started) / 1000;
    const pgCpu = new Map<string, number>();
    for (const p of serverPids(postmaster)) {
      const now = processCpuMs(p);
      if (now === undefined) continue;
      const b = backendOf.get(p);
      const who =
        b?.type === 'client backend'
          ? `backend of ${(b.port !== null && portOwner.get(b.port)) || (b.app ?? '?')}`
          : (b?.type ?? (p === postmaster ? 'postmaster' : 'other'));
      pgCpu.set(who, (pgCpu.get(who) ?? 0) + now - (pgCpu0.get(p) ?? 0));
    }
    const heraldCpu = named.map((p, i) => {
      const after = cpuByThread(p.pid);
      const was = heraldCpu0[i] ?? {};
      return {
        name: p.name,
        threads: Object.entries(after).map(([t, ms]) => [t, ms - (was[t] ?? 0)] as const),
      };
    });
    await sampler.end();
    await new Promise((r) => setTimeout(r, 1000)); // the statistics' flush
    const per = (n: number) => n / made;
    const us = (ms: number) => ((ms * 1000) / made).toFixed(1);
    const out: string[] = [];
    out.push(
      `${made} made in ${seconds.toFixed(1)} s (${Math.round(made / seconds)}/s, from the 201 to DONE), ${workers} worker(s)${noDrain ? ', queues paused (no drain)' : ', draining meanwhile'}`,
    );
    let pgTotal = 0;
    for (const ms of pgCpu.values()) pgTotal += ms;
    out.push(`PostgreSQL CPU: ${us(pgTotal)} us per notification made (${pgTotal} ms), by process:`);
    for (const [who, ms] of [...pgCpu].sort((a, b) => b[1] - a[1]))
      if (ms > 0) out.push(`  ${who}: ${us(ms)} us (${ms} ms)`);
    out.push('Herald CPU per notification made, by process and thread (us):');
    for (const h of heraldCpu) {
      const total = h.threads.reduce((s, [, ms]) => s + ms, 0);
      out.push(
        `  ${h.name}: ${us(total)} (${h.threads
          .filter(([, ms]) => ms > 0.5)
          .map(([t, ms]) => `${t} ${us(ms)}`)
          .join(', ')})`,
      );
    }
    const [db1] =
      await sql`SELECT xact_commit::bigint AS commits FROM pg_stat_database WHERE datname = current_database()`;
    out.push(`commits: ${per(Number(db1?.commits) - counting.commits).toFixed(4)} per notification made`);
    const [wal] =
      await sql`SELECT wal_records::bigint AS records, wal_fpi::bigint AS fpi, wal_bytes::bigint AS bytes FROM pg_stat_wal`;
    const io = await sql`SELECT writes::bigint AS writes, fsyncs::bigint AS fsyncs FROM pg_stat_io
      WHERE object = 'wal' AND (writes > 0 OR fsyncs > 0)`;
    const fsyncs = io.reduce((sum, r) => sum + Number(r.fsyncs ?? 0), 0);
    out.push(
      `WAL: ${per(Number(wal?.records)).toFixed(2)} records, ${per(Number(wal?.bytes)).toFixed(0)} bytes, ` +
        `${per(Number(wal?.fpi)).toFixed(3)} full pages, ${per(fsyncs).toFixed(4)} fsyncs per notification made`,
    );
    const [lsn1] = await sql<[{ lsn: string }]>`SELECT pg_current_wal_insert_lsn()::text AS lsn`;
    const records = await walByKind(sql, counting.lsn, lsn1?.lsn ?? '0/0', 'bytes');
    out.push('WAL records by kind per notification made (count, bytes):');
    for (const r of records.slice(0, 14))
      out.push(`  ${r.kind}: ${per(Number(r.n)).toFixed(3)}, ${per(Number(r.bytes)).toFixed(0)} bytes`);
    out.push('rows per notification made (inserted, updated, of which HOT, deleted):');
    out.push(...rowsChanged(counting.rows, await tableRows(sql), per, 3));
    const indexes = await sql<{ name: string; bytes: number }[]>`
      SELECT indexrelname AS name, pg_relation_size(indexrelid)::bigint AS bytes FROM pg_stat_user_indexes
       WHERE relname = 'notifications' AND pg_relation_size(indexrelid) > 8192 ORDER BY 2 DESC`;
    out.push(
      `notifications' indexes, bytes per notification made: ${indexes.map((r) => `${r.name} ${per(Number(r.bytes)).toFixed(1)}`).join(', ')}`,
    );
    const all = await sql<
      { calls: number; rows: number; ms: number; wal: number; walBytes: number; query: string }[]
    >`SELECT calls::bigint AS calls, rows::bigint AS rows, total_exec_time AS ms, wal_records::bigint AS wal,
        wal_bytes::bigint AS "walBytes", query FROM pg_stat_statements
       WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
       ORDER BY total_exec_time DESC`;
    const kinds = new Map<
      string,
      { calls: number; rows: number; ms: number; wal: number; walBytes: number }
    >();
    for (const s of all) {
      const kind = kindOf(s.query);
      const k = kinds.get(kind) ?? { calls: 0, rows: 0, ms: 0, wal: 0, walBytes: 0 };
      k.calls += Number(s.calls);
      k.rows += Number(s.rows);
      k.ms += Number(s.ms);
      k.wal += Number(s.wal);
      k.walBytes += Number(s.walBytes);
      kinds.set(kind, k);
    }
    out.push('statements by kind (calls, rows and WAL bytes per 1000 made; execution ms in all, mean ms):');
    for (const [kind, k] of [...kinds].sort((a, b) => b[1].ms - a[1].ms).slice(0, 16)) {
      out.push(
        `  ${kind}: ${(per(k.calls) * 1000).toFixed(1)} calls, ${(per(k.rows) * 1000).toFixed(0)} rows, ${(per(k.walBytes) * 1000).toFixed(0)} WAL bytes; ${k.ms.toFixed(0)} ms, ${(k.calls > 0 ? k.ms / k.calls : 0).toFixed(3)} ms`,
      );
    }
    out.push('top statements (calls, rows, execution ms, WAL records; then the text):');
    for (const s of all.slice(0, 10)) {
      const text = String(s.query).replace(/\s+/g, ' ').slice(0, 140);
      out.push(`  ${s.calls} | ${s.rows} | ${Number(s.ms).toFixed(0)} | ${s.wal} | ${text}`);
    }
    out.push(
      `the workers' connections, sampled every 20 ms (${polls} samples): how many of each worker's connections were doing what, on average`,
    );
    for (const [owner, byWhat] of [...samples].sort()) {
      out.push(`  ${owner}:`);
      for (const [what, n] of [...byWhat].sort((a, b) => b[1] - a[1]).slice(0, 12))
        if (what !== 'idle') out.push(`    ${(n / polls).toFixed(3)}: ${what}`);
    }
    const insert = serverLog.indexOf('Insert on notifications');
    if (insert >= 0) {
      const start = serverLog.lastIndexOf('duration:', insert);
      out.push(
        "a range's INSERT ... SELECT, auto_explain:",
        serverLog.slice(Math.max(0, start), insert + 4000),
      );
    }
    process.stdout.write(`${out.join('\n')}\n`);
    if (noDrain) await setPaused(api, false);
  } finally {
    await herald.stop();
    await sql.end();
    await server.stop();
  }
}

runScript(main);
