// Every statement the SQLite store prepares is planned by SQLite itself, and none may read a whole
// table that grows with traffic: a scan of the notifications or of a week of callback messages
// holds the one write lock (or the event loop) for as long as the table is long, for every
// tenant. Statements are captured as the store prepares them, including those it prepares on
// first use (the list filters), and each is planned with every parameter NULL.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';
import { GROWING_TABLES } from './growing-tables.ts';

/**
 * Scans that read a bounded number of rows, each with its reason: the pruners delete the oldest
 * rows by key, `LIMIT` rows at a time (src/store/sqlite/callbacks.ts).
 */
const BOUNDED = [
  /^DELETE FROM callback_attempts WHERE id IN \(SELECT id FROM callback_attempts ORDER BY id LIMIT \?\)/,
  /^DELETE FROM callback_messages WHERE seq IN \(SELECT seq FROM callback_messages ORDER BY seq LIMIT \?\)/,
];

describe('SQLite statement plans', () => {
  const prepare = Database.prototype.prepare;
  const seen = new Set<string>();
  Database.prototype.prepare = function (this: Database.Database, source: string) {
    seen.add(source);
    return prepare.call(this, source);
  } as typeof prepare;
  after(() => {
    Database.prototype.prepare = prepare;
  });

  it('read no growing table whole', async () => {
    const store = createSqliteStore(tempDir());
    try {
      // Statements prepared on first use.
      for (const filter of [
        {},
        { status: 'QUEUED' as const },
        { channel: 'sms' as const, priority: 'LOW' as const },
        { recipientDigest: 'd' },
        { recipientDigest: 'd', status: 'FAILED' as const },
        { broadcastId: 'b' },
        { broadcastId: 'b', status: 'CANCELLED' as const },
      ])
        await store.notifications.list('t', { ...filter, createdAfter: 0, beforeSeq: 10 }, 10);
      await store.queue.stats('t');
      await store.sandbox.list({ tenant: 't', channel: 'email', notificationId: 'x', limit: 5 });
      await store.suppressions.list('t', { channel: 'email', recipient: 'a@example.com', limit: 5 });
      const plan = (source: string) => {
        const names = [...new Set([...source.matchAll(/[@:$]([A-Za-z_]\w*)/g)].map((m) => m[1] as string))];
        const args: unknown[] = names.length > 0 ? [Object.fromEntries(names.map((n) => [n, null]))] : [];
        for (const _ of source.match(/\?/g) ?? []) args.push(null);
        const explain = prepare.call(store.db, `EXPLAIN QUERY PLAN ${source}`) as unknown as {
          all(...params: unknown[]): Array<{ detail: string }>;
        };
        const rows = explain.all(...args);
        return rows.map((r) => r.detail);
      };
      const whole = new RegExp(`^SCAN (${GROWING_TABLES.join('|')})\\b(?!.*INDEX)`);
      const offenders: string[] = [];
      let planned = 0;
      for (const source of seen) {
        if (!/^\s*(SELECT|UPDATE|DELETE|INSERT|WITH)\b/i.test(source)) continue;
        planned++;
        const text = source.replace(/\s+/g, ' ').trim();
        const scans = plan(source).filter((d) => whole.test(d));
        if (scans.length > 0 && !BOUNDED.some((b) => b.test(text)))
          offenders.push(`${scans.join('; ')}: ${text}`);
      }
      assert.ok(planned > 100, `only ${planned} statements were planned`);
      assert.deepEqual(offenders, []);
    } finally {
      await store.close();
    }
  });
});
