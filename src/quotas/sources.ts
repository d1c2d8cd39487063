import type { Clock } from '../clock.ts';
import {
  grantOf,
  type LeaseGrant,
  type LeaseRequest,
  type LeaseReturn,
  type QuotaCounts,
  type QuotaLeases,
  type QuotaStore,
} from '../store/port/quotas.ts';

/**
 * Where a process's quota tokens come from (docs/quotas.md). With several processes
 * (PostgreSQL) each leases blocks from the shared rows; with one (SQLite) the buckets live in
 * this process's memory and only the daily counts are written, once a sync (500 ms).
 */
export interface TokenSource {
  lease(requests: readonly LeaseRequest[], day: string): Promise<LeaseGrant[]>;
  giveBack(returns: readonly LeaseReturn[], day: string): Promise<void>;
  /** Writes what is only in memory (SQLite's daily counts). */
  flush(day: string): Promise<void>;
  /** Forgets a tenant's rows kept in memory (its quota was removed, its rows deleted). */
  forget(tenant: string): void;
}

/** The store's kind of token rows decides: leases from shared rows, or this process's memory. */
export function tokenSource(store: QuotaStore, clock: Clock): TokenSource {
  return store.tokens.shared ? sharedSource(store.tokens, clock) : localSource(store, store.tokens, clock);
}

function sharedSource(leases: QuotaLeases, clock: Clock): TokenSource {
  return {
    lease: (requests, day) => leases.lease(requests, clock.now(), day),
    giveBack: (returns, day) => leases.giveBack(returns, day),
    flush: async () => undefined,
    forget: () => undefined,
  };
}

interface LocalRow {
  tokens: number;
  refilledAt: number;
  day: string;
  used: number;
  /** Counted since the last flush (may be negative after a give-back). */
  unflushed: number;
}

/** One process's buckets in memory; each row's daily count starts from the stored one. */
function localSource(store: QuotaStore, dayRows: QuotaCounts, clock: Clock): TokenSource {
  const rows = new Map<string, LocalRow>();
  const keyOf = (tenant: string, scope: string) => `${tenant}\u0000${scope}`;
  const loaded = new Set<string>();
  const ended: Array<{ tenant: string; scope: string; n: number; day: string }> = [];
  const load = async (tenant: string, day: string) => {
    if (loaded.has(`${tenant}\u0000${day}`)) return;
    const stored = await store.usage(day, tenant);
    for (const row of stored) {
      const mine = rows.get(keyOf(tenant, row.scope));
      if (mine && mine.day === day) mine.used += row.used;
      else
        rows.set(keyOf(tenant, row.scope), {
          tokens: Number.NaN,
          refilledAt: clock.now(),
          day,
          used: row.used,
          unflushed: 0,
        });
    }
    loaded.add(`${tenant}\u0000${day}`);
  };
  return {
    async lease(requests, day) {
      for (const tenant of new Set(requests.map((r) => r.tenant))) await load(tenant, day);
      const now = clock.now();
      return requests.map((r) => {
        const key = keyOf(r.tenant, r.scope);
        let row = rows.get(key);
        if (!row) {
          row = { tokens: Number.NaN, refilledAt: now, day, used: 0, unflushed: 0 };
          rows.set(key, row);
        }
        if (row.day !== day) {
          // The day ended: what it counted and no flush wrote yet is written with the next flush.
          if (row.unflushed !== 0)
            ended.push({ tenant: r.tenant, scope: r.scope, n: row.unflushed, day: row.day });
          Object.assign(row, { day, used: 0, unflushed: 0 });
        }
        // A new bucket starts full (NaN: not yet known).
        if (Number.isNaN(row.tokens)) row.tokens = r.burst ?? 0;
        const { granted, tokens } = grantOf(r, row, now);
        row.tokens = tokens ?? 0;
        row.refilledAt = Math.max(now, row.refilledAt);
        row.used += granted;
        row.unflushed += granted;
        return { granted, tokens, used: row.used };
      });
    },
    async giveBack(returns, day) {
      for (const r of returns) {
        const row = rows.get(keyOf(r.tenant, r.scope));
        if (!row || row.day !== day) continue;
        if (r.burst !== null) row.tokens = Math.min(r.burst, row.tokens + r.tokens);
        row.used = Math.max(0, row.used - r.tokens);
        row.unflushed -= r.tokens;
      }
    },
    async flush(day) {
      for (const { day: last, ...count } of ended.splice(0)) await dayRows.addUsage([count], last);
      const counts: Array<{ tenant: string; scope: string; n: number }> = [];
      for (const [key, row] of rows) {
        if (row.unflushed === 0 || row.day !== day) continue;
        const [tenant, scope] = key.split('\u0000') as [string, string];
        counts.push({ tenant, scope, n: row.unflushed });
        row.unflushed = 0;
      }
      await dayRows.addUsage(counts, day);
    },
    forget(tenant) {
      for (const key of rows.keys()) if (key.startsWith(`${tenant}\u0000`)) rows.delete(key);
      for (const key of loaded) if (key.startsWith(`${tenant}\u0000`)) loaded.delete(key);
    },
  };
}
