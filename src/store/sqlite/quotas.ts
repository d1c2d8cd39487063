import {
  grantOf,
  type LeaseGrant,
  type LeaseRequest,
  type QuotaLimits,
  type QuotaRecord,
  type QuotaStore,
} from '../port/quotas.ts';
import type { SqliteDb } from './open.ts';

type Row = { tenant: string; limits: string; updated_at: number };
const recordOf = (row: Row): QuotaRecord => ({
  tenant: row.tenant,
  limits: JSON.parse(row.limits) as QuotaLimits,
  updatedAt: row.updated_at,
});

/** Per-tenant quotas on SQLite: the one process keeps buckets in memory and adds its daily counts here. */
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
  const create = db.prepare(
    `INSERT INTO quota_buckets (tenant, scope, tokens, refilled_at, day, used) VALUES (?, ?, ?, ?, ?, 0)
     ON CONFLICT (tenant, scope) DO NOTHING`,
  );
  const read = db.prepare(
    'SELECT tokens, refilled_at, day, used FROM quota_buckets WHERE tenant = ? AND scope = ?',
  );
  const write = db.prepare(
    'UPDATE quota_buckets SET tokens = ?, refilled_at = ?, day = ?, used = ? WHERE tenant = ? AND scope = ?',
  );
  const lease = db.transaction((requests: readonly LeaseRequest[], now: number, day: string) =>
    requests.map((r): LeaseGrant => {
      create.run(r.tenant, r.scope, r.burst ?? 0, now, day);
      const row = read.get(r.tenant, r.scope) as {
        tokens: number;
        refilled_at: number;
        day: string;
        used: number;
      };
      const used = row.day === day ? row.used : 0;
      const { granted, tokens } = grantOf(r, { tokens: row.tokens, refilledAt: row.refilled_at, used }, now);
      write.run(tokens ?? 0, Math.max(now, row.refilled_at), day, used + granted, r.tenant, r.scope);
      return { granted, tokens, used: used + granted };
    }),
  );
  const giveBack = db.prepare(
    `UPDATE quota_buckets SET tokens = CASE WHEN ? IS NULL THEN tokens ELSE min(?, tokens + ?) END,
       used = max(0, used - ?) WHERE tenant = ? AND scope = ? AND day = ?`,
  );
  const giveBackAll = db.transaction((returns: Parameters<QuotaStore['giveBack']>[0], day: string) => {
    for (const r of returns) giveBack.run(r.burst, r.burst, r.tokens, r.tokens, r.tenant, r.scope, day);
  });
  const add = db.prepare(
    `INSERT INTO quota_buckets (tenant, scope, tokens, refilled_at, day, used) VALUES (?, ?, 0, 0, ?, ?)
     ON CONFLICT (tenant, scope) DO UPDATE SET
       used = CASE WHEN quota_buckets.day = excluded.day THEN quota_buckets.used + excluded.used ELSE excluded.used END,
       day = excluded.day`,
  );
  const addAll = db.transaction((counts: Parameters<QuotaStore['addUsage']>[0], day: string) => {
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
    async lease(requests, now, day) {
      return requests.length === 0 ? [] : lease.immediate(requests, now, day);
    },
    async giveBack(returns, day) {
      if (returns.length > 0) giveBackAll.immediate(returns, day);
    },
    async addUsage(counts, day) {
      if (counts.length > 0) addAll.immediate(counts, day);
    },
    async usage(day, tenant) {
      const rows = tenant === undefined ? usageAll.all(day) : usageOf.all(day, tenant);
      return rows as Array<{ tenant: string; scope: string; used: number }>;
    },
  };
}
