import type { LimitStore } from '../port/limits.ts';
import type { SqliteDb } from './open.ts';

/** The SQLite limit store: the shared-limit tables with their one (in-process) user. */
export function createSqliteLimits(db: SqliteDb): LimitStore {
  const create = db.prepare(
    'INSERT INTO provider_buckets (key, tokens, refilled_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING',
  );
  const read = db.prepare('SELECT tokens, refilled_at FROM provider_buckets WHERE key = ?');
  const write = db.prepare('UPDATE provider_buckets SET tokens = ?, refilled_at = ? WHERE key = ?');
  const take = db.transaction((requests: Parameters<LimitStore['takeTokens']>[0], now: number) =>
    requests.map((r) => {
      create.run(r.key, r.burst, now);
      const row = read.get(r.key) as { tokens: number; refilled_at: number };
      const elapsed = Math.max(0, now - row.refilled_at);
      const tokens = Math.min(r.burst, row.tokens + (elapsed * r.ratePerSecond) / 1000);
      const granted = Math.max(0, Math.min(r.want, Math.floor(tokens)));
      write.run(tokens - granted, Math.max(now, row.refilled_at), r.key);
      return granted;
    }),
  );
  const setCircuit = db.prepare(
    `INSERT INTO provider_circuits (key, open_until, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET open_until = excluded.open_until, updated_at = excluded.updated_at`,
  );
  const open = db.prepare(
    'SELECT key, open_until AS openUntil FROM provider_circuits WHERE open_until > ? ORDER BY key',
  );
  return {
    async takeTokens(requests, now) {
      return requests.length === 0 ? [] : take.immediate(requests, now);
    },
    async setCircuit(key, openUntil, now) {
      setCircuit.run(key, openUntil, now);
    },
    async openCircuits(now) {
      return open.all(now) as Array<{ key: string; openUntil: number }>;
    },
  };
}
