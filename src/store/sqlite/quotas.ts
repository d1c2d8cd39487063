import type { QuotaCounts, QuotaLimits, QuotaRecord, QuotaStore } from '../port/quotas.ts';
import type { SqliteDb } from './open.ts';

type Row = { tenant: string; limits: string; updated_at: number };
const recordOf = (row: Row): QuotaRecord => ({
  tenant: row.tenant,
  limits: JSON.parse(row.limits) as QuotaLimits,
  updatedAt: row.updated_at,
});

/**
 * Per-tenant quotas on SQLite: the one process keeps its buckets in memory (quotas/sources.ts) and
 * adds its daily counts here; nothing leases from these rows (their tokens and refilled_at stay 0).
 */
export function createSqliteQuotas(db: SqliteDb): QuotaStore {
  const put = db.prepare(
    `INSERT INTO tenant_quotas (tenant, limits, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (tenant) DO UPDATE SET limits = excluded.limits, updated_at = excluded.updated_at`,
  );
  const get = db.prepare('SELECT tenant, limits, updated_at FROM tenant_quotas WHERE tenant = ?');
  const list = db.prepare('SELECT tenant, limits, updated_at FROM tenant_quotas ORDER BY tenant');
  const removeLimits = db.prepare('DELETE FROM tenant_quotas WHERE tenant = ?');
  const removeRows = db.prepare('DELETE FROM quota_buckets WHERE tenant = ?');
  const remove = db.transaction((tenant: string) => {
    removeRows.run(tenant);
    return removeLimits.run(tenant).changes > 0;
  });
  const add = db.prepare(
    `INSERT INTO quota_buckets (tenant, scope, tokens, refilled_at, day, used) VALUES (?, ?, 0, 0, ?, ?)
     ON CONFLICT (tenant, scope) DO UPDATE SET
       used = CASE WHEN quota_buckets.day = excluded.day THEN quota_buckets.used + excluded.used ELSE excluded.used END,
       day = excluded.day`,
  );
  const addAll = db.transaction((counts: Parameters<QuotaCounts['addUsage']>[0], day: string) => {
    for (const c of counts) add.run(c.tenant, c.scope, day, c.n);
  });
  const usageAll = db.prepare(
    'SELECT tenant, scope, used FROM quota_buckets WHERE day = ? ORDER BY tenant, scope',
  );
  const usageOf = db.prepare(
    'SELECT tenant, scope, used FROM quota_buckets WHERE day = ? AND tenant = ? ORDER BY scope',
  );
  return {
    async put(tenant, limits, now) {
      put.run(tenant, JSON.stringify(limits), now);
    },
    async get(tenant) {
      const row = get.get(tenant) as Row | undefined;
      return row && recordOf(row);
    },
    async list() {
      return (list.all() as Row[]).map(recordOf);
    },
    async remove(tenant) {
      return remove.immediate(tenant);
    },
    tokens: {
      shared: false,
      async addUsage(counts, day) {
        if (counts.length > 0) addAll.immediate(counts, day);
      },
    },
    async usage(day, tenant) {
      const rows = tenant === undefined ? usageAll.all(day) : usageOf.all(day, tenant);
      return rows as Array<{ tenant: string; scope: string; used: number }>;
    },
  };
}
