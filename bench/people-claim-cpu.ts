/**
 * `node --import tsx bench/people-claim-cpu.ts [n] [--claim=N] [--as=people|addresses]`: what a
 * claim costs a notification to a person against one to an address, on the real SQLite store
 * with no HTTP and no delivery. Makes `n` (100,000 unless told) NORMAL email notifications
 * through a broadcast to a topic seeded as the `fan-out` scenario seeds it (each a `{ id }`
 * recipient whose profile has an email address); `--as=addresses` then rewrites each one's
 * recipient to that address, as if it had been accepted to it. Then claims them all, `--claim`
 * (500) a queue cycle, each cycle completing (DELIVERED, a person's with its address key) what the
 * one before claimed, and prints that CPU (user + system) per notification. `--cache=MiB` sets
 * the store's page cache. Decision
 * record 0061 quotes it; run both kinds alternately.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Completion } from '../src/notifications/status.ts';
import { everyPriority } from '../src/store/port/queue.ts';
import { createSqliteStore } from '../src/store/sqlite/index.ts';
import { suppressionKey } from '../src/suppressions/model.ts';
import { seedSqlite, topicBroadcast } from './scenarios/fan-out.ts';

const args = process.argv.slice(2);
const option = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const n = Number(args.find((a) => /^\d+$/.test(a)) ?? 100_000);
const batch = Number(option('claim') ?? 500);
const as = option('as') ?? 'people';
/** The store's page cache, MiB (the store's own default unless told). */
const cacheMiB = option('cache') === undefined ? undefined : Number(option('cache'));

const dir = mkdtempSync(join(tmpdir(), 'herald-people-claim-'));
try {
  createSqliteStore(dir).close();
  seedSqlite(dir, n);
  const store = createSqliteStore(dir, cacheMiB);
  const now = Date.now();
  await store.broadcasts.create(topicBroadcast('b-people', 'NORMAL', 'Hello', now));
  for (;;) {
    const step = await store.broadcasts.step(Date.now(), 5000);
    if (!step || step.finished) break;
  }
  if (as === 'addresses') {
    store.db
      .prepare(
        `UPDATE notifications SET recipient = json_object('email', (recipient ->> 'id') || '@example.com')
         WHERE queue_state = 'ready'`,
      )
      .run();
  }
  const claim = {
    perPriority: [batch, batch, batch, batch],
    sharedLimit: batch,
    perChannel: everyPriority({ email: batch, sms: batch, push: batch }),
  };
  let claimed = 0;
  let completions: Completion[] = [];
  const cpu = process.cpuUsage();
  for (;;) {
    const at = Date.now();
    const r = await store.queue.cycle({
      owner: 'w',
      now: at,
      leaseUntil: at + 600_000,
      completions,
      maxAttempts: 3,
      claim,
    });
    claimed += r.claimed.length;
    // The next cycle completes what this one claimed, as the worker's would after the sends.
    completions = r.claimed.map((record) => ({
      seq: record.seq,
      attempt: record.attempts,
      kind: 'delivered' as const,
      provider: 'sandbox',
      addressKey: record.person === undefined ? undefined : suppressionKey(record.recipient),
    }));
    if (r.claimed.length + r.suppressed === 0) break;
  }
  const used = process.cpuUsage(cpu);
  store.close();
  const us = (used.user + used.system) / Math.max(1, claimed);
  console.log(
    JSON.stringify({
      as,
      claimed,
      batch,
      cacheMiB: cacheMiB ?? 'default',
      cpuUsPerNotification: +us.toFixed(2),
    }),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
