/**
 * `node --import tsx bench/sqlite-fan-out-steps.ts [subscribers] [--chunk=N] [--autocheckpoint=N]
 * [--drop-index=a,b]`: a SQLite broadcast's fan-out steps alone (no HTTP, no drain, no CRITICAL),
 * on the real store: a topic of `subscribers` (200,000 unless told) seeded as the `fan-out`
 * scenario seeds it, then `BroadcastStore.step` until DONE, `--chunk` notifications a step (500,
 * FIXED.fanOutChunk). It prints the rate, the process's CPU (user and system), each step's wall
 * time (p50, p99, max), the bytes handed to write(2) a notification (WAL frames and checkpoints,
 * from /proc/self/io) and the checkpoints' share: `--autocheckpoint=0` turns SQLite's automatic
 * checkpoint off on the store's connection (the steps then never copy the WAL into the database),
 * `--drop-index` drops notification indexes before the steps (what an index entry costs, not a
 * setting Herald could run with). Decision record 0048 quotes its output.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteStore } from '../src/store/sqlite/index.ts';
import { seedSqlite, TOPIC } from './scenarios/fan-out.ts';

const args = process.argv.slice(2);
const option = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const subscribers = Number(args.find((a) => /^\d+$/.test(a)) ?? 200_000);
const chunk = Number(option('chunk') ?? 500);
const autocheckpoint = option('autocheckpoint');
const dropped = (option('drop-index') ?? '').split(',').filter(Boolean);

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
  await store.broadcasts.create({
    id: 'b-steps',
    tenant: 'default',
    topic: TOPIC,
    channel: 'email',
    priority: 'LOW',
    templateKey: null,
    templateVersion: null,
    content: JSON.stringify({ subject: 'News for {{ who }}', text: 'Hello' }),
    variables: JSON.stringify({ who: 'everyone' }),
    metadata: null,
    category: null,
    locale: null,
    scheduledAt: null,
    expiresAt: null,
    createdAt: now,
  });
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
  const cpu = process.cpuUsage(cpuBefore);
  const bytes = written() - bytesBefore;
  lengths.sort((a, b) => a - b);
  const at = (q: number) =>
    (lengths[Math.min(lengths.length - 1, Math.floor(lengths.length * q))] ?? 0).toFixed(2);
  const [wal] = store.db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
  store.close();
  console.log(
    JSON.stringify({
      subscribers,
      chunk,
      autocheckpoint: autocheckpoint ?? 'default',
      dropped,
      made,
      perSecond: Math.round(made / seconds),
      cpuUserS: +(cpu.user / 1e6).toFixed(2),
      cpuSystemS: +(cpu.system / 1e6).toFixed(2),
      steps: lengths.length,
      stepMs: { p50: +at(0.5), p99: +at(0.99), max: +at(1) },
      bytesWrittenPerNotification: Math.round(bytes / Math.max(1, made)),
      walFramesLeft: wal?.log ?? null,
    }),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
