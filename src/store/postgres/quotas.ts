import type { LeaseGrant, QuotaLimits, QuotaRecord, QuotaStore } from '../port/quotas.ts';
import type { Sql } from './connect.ts';

type Row = { tenant: string; limits: string; updatedAt: string | number };
const recordOf = (row: Row): QuotaRecord => ({
  tenant: row.tenant,
  limits: JSON.parse(row.limits) as QuotaLimits,
  updatedAt: Number(row.updatedAt),
});

/**
 * Per-tenant quotas on PostgreSQL, shared by every api process. A lease is one UPDATE ...
 * RETURNING over all the rows it asks of, each locked (FOR UPDATE, in key order) for that one
 * statement, its refill computed from the row: processes leasing at once queue on the row and
 * never get the same token, nor the day's last unit, twice (docs/quotas.md).
 */
export function createPostgresQuotas(sql: Sql): QuotaStore {
  return {
    async put(tenant, limits, now) {
      await sql`INSERT INTO tenant_quotas (tenant, limits, updated_at) VALUES (${tenant}, ${JSON.stringify(limits)}, ${now})
        ON CONFLICT (tenant) DO UPDATE SET limits = excluded.limits, updated_at = excluded.updated_at`;
    },
    async get(tenant) {
      const [row] = await sql<Row[]>`
        SELECT tenant, limits, updated_at AS "updatedAt" FROM tenant_quotas WHERE tenant = ${tenant}`;
      return row && recordOf(row);
    },
    async list() {
      const rows = await sql<
        Row[]
      >`SELECT tenant, limits, updated_at AS "updatedAt" FROM tenant_quotas ORDER BY tenant`;
      return rows.map(recordOf);
    },
    async remove(tenant) {
      return sql.begin(async (tx) => {
        await tx`DELETE FROM quota_buckets WHERE tenant = ${tenant}`;
        const gone = await tx`DELETE FROM tenant_quotas WHERE tenant = ${tenant}`;
        return gone.count > 0;
      });
    },
    tokens: {
      shared: true,
      async lease(requests, now, day) {
        if (requests.length === 0) return [];
        const input = JSON.stringify(
          requests.map((r, ord) => ({
            tenant: r.tenant,
            scope: r.scope,
            want: r.want,
            rate: r.ratePerSecond,
            burst: r.burst,
            per_day: r.perDay,
            ord,
          })),
        );
        const rows = await sql.begin(async (tx) => {
          await tx`INSERT INTO quota_buckets (tenant, scope, tokens, refilled_at, day, used)
          SELECT tenant, scope, COALESCE(burst, 0), ${now}::bigint, ${day}, 0
            FROM json_to_recordset(${input}::text::json) AS r(tenant text, scope text, burst float8)
           ORDER BY tenant, scope ON CONFLICT (tenant, scope) DO NOTHING`;
          return tx<{ ord: number; granted: number; tokens: number | null; used: string | number }[]>`
          WITH r AS (
            SELECT * FROM json_to_recordset(${input}::text::json)
              AS r(tenant text, scope text, want int, rate float8, burst float8, per_day bigint, ord int)),
          cur AS (
            SELECT b.tenant, b.scope, r.ord, r.want, r.per_day,
                   CASE WHEN r.rate IS NULL THEN NULL
                        ELSE LEAST(r.burst, b.tokens + GREATEST(0, ${now}::bigint - b.refilled_at) * r.rate / 1000.0) END AS tokens,
                   CASE WHEN b.day = ${day} THEN b.used ELSE 0 END AS used
              FROM quota_buckets b JOIN r ON r.tenant = b.tenant AND r.scope = b.scope
             ORDER BY b.tenant, b.scope FOR UPDATE OF b),
          g AS (
            SELECT *, GREATEST(0, LEAST(want, COALESCE(floor(tokens)::bigint, want), COALESCE(per_day - used, want)))::int AS granted
              FROM cur)
          UPDATE quota_buckets b
             SET tokens = COALESCE(g.tokens - g.granted, 0),
                 refilled_at = GREATEST(b.refilled_at, ${now}::bigint),
                 day = ${day},
                 used = g.used + g.granted
            FROM g WHERE b.tenant = g.tenant AND b.scope = g.scope
          RETURNING g.ord, g.granted, g.tokens - g.granted AS tokens, g.used + g.granted AS used`;
        });
        const grants = requests.map((): LeaseGrant => ({ granted: 0, tokens: null, used: 0 }));
        for (const row of rows)
          grants[row.ord] = { granted: row.granted, tokens: row.tokens, used: Number(row.used) };
        return grants;
      },
      async giveBack(returns, day) {
        if (returns.length === 0) return;
        const input = JSON.stringify(returns);
        await sql`UPDATE quota_buckets b
           SET tokens = CASE WHEN r.burst IS NULL THEN b.tokens ELSE LEAST(r.burst, b.tokens + r.tokens) END,
               used = GREATEST(0, b.used - r.tokens)
          FROM json_to_recordset(${input}::text::json) AS r(tenant text, scope text, tokens int, burst float8)
         WHERE b.tenant = r.tenant AND b.scope = r.scope AND b.day = ${day}`;
      },
    },
    async usage(day, tenant) {
      const rows =
        tenant === undefined
          ? await sql<{ tenant: string; scope: string; used: string }[]>`
              SELECT tenant, scope, used FROM quota_buckets WHERE day = ${day} ORDER BY tenant, scope`
          : await sql<{ tenant: string; scope: string; used: string }[]>`
              SELECT tenant, scope, used FROM quota_buckets WHERE day = ${day} AND tenant = ${tenant} ORDER BY scope`;
      return rows.map((r) => ({ tenant: r.tenant, scope: r.scope, used: Number(r.used) }));
    },
  };
}
