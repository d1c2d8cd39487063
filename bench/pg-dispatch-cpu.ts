/**
 * `node --import tsx bench/pg-dispatch-cpu.ts [count] [workers]`: the PostgreSQL dispatch
 * scenario's drain (`count` NORMAL to the sandbox, `workers` worker processes on the scale-out
 * layout) with the CPU it took per notification, by process and thread (os-thread.ts names
 * Herald's threads; main, dispatch, other) and PostgreSQL's (every server process, from /proc),
 * from the workers' start to the drain's end. CPU per notification is steadier than the rate on
 * a loaded machine (#48, decision 0038: comparing two commits, run alternately).
 */
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { startPostgres } from '../test/helpers/postgres.ts';
import { deploy } from './lib/deploy.ts';
import { deliveredSpan, watchDrain } from './lib/drain.ts';
import { fillBacklog } from './lib/fill.ts';
import { cpuByThread, runScript, serverCpuMs } from './lib/proc.ts';

const [count = 40_000, workers = 2] = process.argv.slice(2).map(Number);
async function main() {
  const server = await startPostgres({ durable: true });
  try {
    const databaseUrl = await server.createDatabase('herald_dispatch_cpu');
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
    const [{ pid }] = await sql<[{ pid: number }]>`SELECT pg_backend_pid() AS pid`;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const postmaster = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    await sql.end();
    const filler = await deploy('postgres', { databaseUrl, roles: 'auth,api', workers: 0 });
    try {
      await fillBacklog(filler.api, count, 'NORMAL', 'pg-dispatch-cpu backlog', filler.urls);
    } finally {
      await filler.stop();
    }
    const pgBefore = serverCpuMs(postmaster);
    const runner = await deploy('postgres', { databaseUrl, workers });
    try {
      // The worker processes are the last `workers` started (deploy.ts); their CPU from here.
      const workerPids = runner.processes.slice(-workers).map((p) => p.pid as number);
      const before = workerPids.map(cpuByThread);
      const drain = await watchDrain(runner.api, Math.max(120_000, count), 'pg-dispatch-cpu');
      if (drain.left > 0) throw new Error(`${drain.left} still outstanding`);
      const after = workerPids.map(cpuByThread);
      const pg = serverCpuMs(postmaster) - pgBefore;
      const span = await deliveredSpan({ databaseUrl });
      const share: Record<string, number> = {};
      after.forEach((threads, i) => {
        for (const [name, ms] of Object.entries(threads))
          share[name] = (share[name] ?? 0) + ((ms - (before[i]?.[name] ?? 0)) * 1000) / count;
      });
      const workersAll = Object.values(share).reduce((a, b) => a + b, 0);
      const rows = Object.entries(share)
        .map(([name, us]) => `${name} ${us.toFixed(1)}`)
        .join(', ');
      process.stdout.write(
        `${count} NORMAL, ${workers} workers: ${Math.round(span?.perSecond ?? drain.perSecond)}/s; ` +
          `CPU per notification: workers ${workersAll.toFixed(1)} µs (${rows}), PostgreSQL ${((pg * 1000) / count).toFixed(1)} µs\n`,
      );
    } finally {
      await runner.stop();
    }
  } finally {
    await server.stop();
  }
}

runScript(main);
