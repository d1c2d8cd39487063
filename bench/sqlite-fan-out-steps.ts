/**
 * `node --import tsx bench/sqlite-fan-out-steps.ts [subscribers] [--chunk=N] [--autocheckpoint=N]
 * [--drop-index=a,b] [--checkpointer=MS] [--content-chars=N] [--claim=N]`: a SQLite broadcast's fan-out steps alone (no HTTP, no drain, no CRITICAL),
 * on the real store: a topic of `subscribers` (200,000 unless told) seeded as the `fan-out`
 * scenario seeds it, then `BroadcastStore.step` until DONE, `--chunk` notifications a step (500,
 * FIXED.fanOutChunk). It prints the rate, the process's CPU (user and system), each step's wall
 * time (p50, p99, max), the bytes handed to write(2) a notification (WAL frames and checkpoints,
 * from /proc/self/io) and the checkpoints' share: `--autocheckpoint=0` turns SQLite's automatic
 * checkpoint off on the store's connection (the steps then never copy the WAL into the database),
 * `--drop-index` drops notification indexes before the steps (what an index entry costs, not a
 * setting Herald could run with), `--checkpointer=MS` runs `wal_checkpoint(PASSIVE)` every MS on a
 * connection of a thread of its own meanwhile (the store's own automatic checkpoint left on: it
 * then finds little left to copy), `--content-chars=N` pads the broadcast's text to N characters,
 * `--claim=N` then claims every notification made, N a queue cycle, and prints that rate and CPU. It prints the twelve longest steps too (a checkpoint inside a
 * step is what a CRITICAL would wait for), and, for the notifications table and each of its indexes,
 * the bytes of payload, the bytes of pages and the cells a notification added (SQLite's `dbstat`). Decision records 0048 and 0054 quote its output.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { everyPriority } from '../src/store/port/queue.ts';
import { createSqliteStore } from '../src/store/sqlite/index.ts';
import { seedSqlite, topicBroadcast } from './scenarios/fan-out.ts';

const args = process.argv.slice(2);
const option = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const subscribers = Number(args.find((a) => /^\d+$/.test(a)) ?? 200_000);
const chunk = Number(option('chunk') ?? 500);
const autocheckpoint = option('autocheckpoint');
const dropped = (option('drop-index') ?? '').split(',').filter(Boolean);
const checkpointerMs = Number(option('checkpointer') ?? 0);
/** Then claims every notification made, `--claim=N` a cycle (what the drain's claims cost a notification). */
const claimBatch = Number(option('claim') ?? 0);
/** The broadcast's text padded to this many characters (a newsletter's size), or the scenario's 'Hello'. */
const contentChars = Number(option('content-chars') ?? 0);

/** A thread checkpointing the database every `ms` on its own connection until told to stop; answers its count and ms. */
function checkpointer(
  file: string,
  ms: number,
): { stop(): Promise<{ runs: number; meanMs: number; maxMs: number }> } {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const Database = require('better-sqlite3');
     const db = new Database(workerData.file);
     db.pragma('busy_timeout = 5000');
     const times = [];
     const timer = setInterval(() => {
       const began = performance.now();
       db.pragma('wal_checkpoint(PASSIVE)');
       times.push(performance.now() - began);
     }, workerData.ms);
     parentPort.on('message', () => {
       clearInterval(timer);
       db.close();
       parentPort.postMessage({ runs: times.length, meanMs: times.reduce((a, b) => a + b, 0) / Math.max(1, times.length), maxMs: Math.max(0, ...times) });
     });`,
    { eval: true, workerData: { file, ms } },
  );
  return {
    stop: () =>
      new Promise((resolve) => {
        worker.once('message', (m) => {
          void worker.terminate();
          resolve(m);
        });
        worker.postMessage('stop');
      }),
  };
}

/** Each b-tree of the notifications table (the table and its indexes): bytes of payload and of pages, and cells. */
function btrees(
  db: ReturnType<typeof createSqliteStore>['db'],
): Map<string, { payload: number; pages: number; cells: number }> {
  const rows = db
    .prepare(
      `SELECT d.name, d.payload, d.pgsize AS pages, d.ncell AS cells FROM dbstat('main', 1) d
       JOIN sqlite_master m ON m.name = d.name WHERE m.tbl_name = 'notifications'`,
    )
    .all() as { name: string; payload: number; pages: number; cells: number }[];
  return new Map(rows.map((r) => [r.name, r]));
}

/** Claims every ready notification, `batch` a cycle; answers how many, the wall seconds and the CPU. */
async function claimAll(store: ReturnType<typeof createSqliteStore>, batch: number) {
  const claim = {
    perPriority: [batch, batch, batch, batch],
    sharedLimit: batch,
    perChannel: everyPriority({ email: batch, sms: batch, push: batch }),
  };
  let claimed = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (;;) {
    const now = Date.now();
    const r = await store.queue.cycle({
      owner: 'w',
      now,
      leaseUntil: now + 600_000,
      completions: [],
      maxAttempts: 3,
      claim,
    });
    claimed += r.claimed.length;
    if (r.claimed.length + r.suppressed === 0) break;
  }
  const used = process.cpuUsage(cpu);
  return {
    claimed,
    perSecond: Math.round(claimed / ((performance.now() - start) / 1000)),
    cpuUserS: +(used.user / 1e6).toFixed(2),
    cpuSystemS: +(used.system / 1e6).toFixed(2),
  };
}

/** Bytes this process has handed to write(2) so far (Linux). */
function written(): number {
  const line = readFileSync('/proc/self/io', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('wchar:'));
  return Number(line?.split(/\s+/)[1] ?? 0);
}

const dir = mkdtempSync(join(tmpdir(), 'herald-fan-out-steps-'));
try {
  createSqliteStore(dir).close();
  seedSqlite(dir, subscribers);
  const store = createSqliteStore(dir);
  if (autocheckpoint !== undefined) store.db.pragma(`wal_autocheckpoint = ${Number(autocheckpoint)}`);
  for (const index of dropped) store.db.exec(`DROP INDEX ${index}`);
  const now = Date.now();
  await store.broadcasts.create(topicBroadcast('b-steps', 'LOW', 'Hello'.padEnd(contentChars, '.'), now));
  const treesBefore = btrees(store.db);
  const thread = checkpointerMs > 0 ? checkpointer(join(dir, 'herald.db'), checkpointerMs) : undefined;
  const lengths: number[] = [];
  let made = 0;
  const bytesBefore = written();
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  for (;;) {
    const began = performance.now();
    const step = await store.broadcasts.step(Date.now(), chunk);
    lengths.push(performance.now() - began);
    if (!step) break;
    made += step.made;
    if (step.finished) break;
  }
  const seconds = (performance.now() - start) / 1000;
  const checkpoints = await thread?.stop();
  const cpu = process.cpuUsage(cpuBefore);
  const bytes = written() - bytesBefore;
  lengths.sort((a, b) => a - b);
  const at = (q: number) =>
    (lengths[Math.min(lengths.length - 1, Math.floor(lengths.length * q))] ?? 0).toFixed(2);
  const treesAfter = btrees(store.db);
  const perRow = Object.fromEntries(
    [...treesAfter].map(([name, t]) => {
      const b = treesBefore.get(name) ?? { payload: 0, pages: 0, cells: 0 };
      const per = (x: number) => +(x / Math.max(1, made)).toFixed(1);
      return [
        name,
        { payload: per(t.payload - b.payload), pages: per(t.pages - b.pages), cells: per(t.cells - b.cells) },
      ];
    }),
  );
  const claims = claimBatch > 0 ? await claimAll(store, claimBatch) : null;
  const [wal] = store.db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
  store.close();
  console.log(
    JSON.stringify({
      subscribers,
      chunk,
      contentChars,
      autocheckpoint: autocheckpoint ?? 'default',
      dropped,
      made,
      perSecond: Math.round(made / seconds),
      cpuUserS: +(cpu.user / 1e6).toFixed(2),
      cpuSystemS: +(cpu.system / 1e6).toFixed(2),
      steps: lengths.length,
      stepMs: { p50: +at(0.5), p99: +at(0.99), max: +at(1) },
      longestStepsMs: lengths.slice(-12).map((x) => Math.round(x)),
      checkpointer: checkpoints
        ? {
            everyMs: checkpointerMs,
            runs: checkpoints.runs,
            meanMs: +checkpoints.meanMs.toFixed(1),
            maxMs: +checkpoints.maxMs.toFixed(1),
          }
        : null,
      bytesWrittenPerNotification: Math.round(bytes / Math.max(1, made)),
      walFramesLeft: wal?.log ?? null,
      claims,
      bytesPerNotification: perRow,
    }),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
