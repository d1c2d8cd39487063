import { randomUUID } from 'node:crypto';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { measured, type Row } from '../lib/report.ts';
import { median } from '../lib/stats.ts';
import { tempDir } from '../lib/tmp.ts';
import type { Scenario } from './types.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
/** The caller's own changes in the window: two notifications, four changes each. */
const OWN = 8;
const CATCH_UPS = 5;

/**
 * A temporary SQLite store whose status log holds `old` changes of a month ago and `recent` of
 * the last hour, all of tenant `big`, then the `small` tenant's 8 of a minute ago (four changes a
 * notification, inserted directly; disk sync off, checkpointed before timing).
 */
function filledLog(old: number, recent: number) {
  const store = createSqliteStore(tempDir('catch-up'));
  const db = store.db;
  db.pragma('synchronous = OFF');
  const notification =
    db.prepare(`INSERT INTO notifications (id, tenant, channel, priority, status, queue_state,
    recipient, content, variables, metadata, attempts, created_at, updated_at)
    VALUES (?, ?, 'email', 2, 'DELIVERED', 'done', '{"email":"ada@example.com"}', '{"subject":"Hi","text":"x"}',
      '{}', '{}', 1, ?, ?)`);
  const event = db.prepare('INSERT INTO notification_events (notification_seq, type, at) VALUES (?, ?, ?)');
  const now = Date.now();
  const add = db.transaction((count: number, tenant: string, at: number) => {
    for (let i = 0; i < count; i += 4) {
      const seq = Number(notification.run(randomUUID(), tenant, at, at).lastInsertRowid);
      for (const type of ['QUEUED', 'PROCESSING', 'SENT', 'DELIVERED']) event.run(seq, type, at);
    }
  });
  const fill = (count: number, tenant: string, at: number) => {
    for (let done = 0; done < count; done += 40_000) {
      add(Math.min(40_000, count - done), tenant, at);
      if (done % 400_000 === 0)
        progress(`catch-up: ${done.toLocaleString('en-US')} of ${count.toLocaleString('en-US')}`);
    }
  };
  fill(old, 'big', now - 30 * DAY_MS);
  fill(recent, 'big', now - 60 * 60 * 1000);
  fill(OWN, 'small', now - 60 * 1000);
  db.pragma('wal_checkpoint(TRUNCATE)');
  return { store, now };
}

/**
 * Scenario 18: reads over a long history, in-process on a temporary SQLite database. What a
 * stream's catch-up from a month-old Last-Event-ID costs (API.md §10, the last 24 hours are
 * replayed): the reads a stream of tenant `small` makes, as the status hub makes them (pages of
 * 1,000, up to the log's head, nothing older than 24 hours); and a page of a filtered
 * `GET /notifications` that matches none of tenant `big`'s notifications. On `npm start` each
 * read runs on the event loop that serves every request, so the longest one is what such a
 * request can hold every other for.
 */
async function run(options: BenchOptions): Promise<Row[]> {
  const { old, recent } = options.sizes.catchUp;
  const { store, now } = filledLog(old, recent);
  try {
    const log = store.statusLog;
    const longest: number[] = [];
    const totals: number[] = [];
    let reads = 0;
    for (let round = 0; round < CATCH_UPS; round++) {
      const until = await log.head();
      let from = '1';
      let found = 0;
      const times: number[] = [];
      for (;;) {
        const started = performance.now();
        const page = await log.read(from, { until, since: now - DAY_MS, tenants: ['small'], limit: 1000 });
        times.push(performance.now() - started);
        found += page.rows.length;
        from = page.readTo;
        if (!page.more) break;
      }
      if (found !== OWN) throw new Error(`the catch-up found ${found} of ${OWN} changes`);
      longest.push(Math.max(...times));
      totals.push(times.reduce((a, b) => a + b, 0));
      reads = times.length;
    }
    // GET /notifications?status=FAILED over the other tenant's notifications, none of them FAILED.
    const listTimes: number[] = [];
    let pages = 0;
    for (let round = 0; round < CATCH_UPS; round++) {
      let beforeSeq: number | undefined;
      pages = 0;
      for (;;) {
        const started = performance.now();
        const page = await store.notifications.list('big', { status: 'FAILED', beforeSeq }, 51);
        listTimes.push(performance.now() - started);
        pages += 1;
        if (page.scannedTo === undefined) break;
        beforeSeq = page.scannedTo;
      }
    }
    const notifications = (old + recent) / 4;
    progress(`catch-up: list pages ${pages}, longest ${Math.max(...listTimes).toFixed(2)} ms`);
    const size = `${old.toLocaleString('en-US')} changes a month old, ${recent.toLocaleString('en-US')} of another tenant's in the last hour`;
    progress(`catch-up: longest read ${longest.map((t) => t.toFixed(2)).join(', ')} ms; ${reads} reads`);
    return [
      measured(
        'catch-up',
        'longest read of a catch-up from a month-old Last-Event-ID',
        median(longest),
        'ms',
        {
          target: { bound: 10, better: 'lower', text: '<= 10 ms' },
          note: `median of ${CATCH_UPS} catch-ups; ${size}, ${OWN} of the caller's; ${reads} reads each; disk sync off`,
        },
      ),
      measured('catch-up', 'the whole catch-up (all its reads)', median(totals), 'ms', {
        note: `median of ${CATCH_UPS}; the reads take turns with requests on the event loop`,
      }),
      measured(
        'catch-up',
        `one GET /notifications?status=FAILED page over ${notifications.toLocaleString('en-US')} of the tenant's (none FAILED)`,
        median(listTimes),
        'ms',
        {
          target: { bound: 10, better: 'lower', text: '<= 10 ms' },
          note: `the store's read, median of ${listTimes.length} (${pages} pages to the end, ${CATCH_UPS} times), slowest ${Math.max(...listTimes).toFixed(2)} ms`,
        },
      ),
    ];
  } finally {
    await store.close();
  }
}

export const catchUpScenario: Scenario = {
  name: 'catch-up',
  title: '18. Long histories: a stream catch-up from a month-old Last-Event-ID, a filtered list',
  run,
};
