import type { LimitStore } from '../port/limits.ts';
import type { Sql } from './connect.ts';

/**
 * Shared provider limits on PostgreSQL. A take is one statement over all requested buckets: the
 * refill is computed from the row it locks (FOR UPDATE), so workers taking at once queue on the
 * bucket row for microseconds and never hand out the same token twice. It runs outside the claim
 * transaction so the lock is held for one statement only.
 */
export function createPostgresLimits(sql: Sql): LimitStore {
  return {
    async takeTokens(requests, now) {
      if (requests.length === 0) return [];
      const input = JSON.stringify(
        requests.map((r, ord) => ({ key: r.key, want: r.want, rate: r.ratePerSecond, burst: r.burst, ord })),
      );
      const rows = await sql.begin(async (tx) => {
        await tx`INSERT INTO provider_buckets (key, tokens, refilled_at)
          SELECT key, burst, ${now}::bigint FROM json_to_recordset(${input}::text::json) AS r(key text, burst float8)
          ORDER BY key ON CONFLICT (key) DO NOTHING`;
        return tx<{ ord: number; granted: number }[]>`
          WITH r AS (
            SELECT * FROM json_to_recordset(${input}::text::json)
              AS r(key text, want int, rate float8, burst float8, ord int)),
          cur AS (
            SELECT b.key, r.ord, r.want,
                   LEAST(r.burst, b.tokens + GREATEST(0, ${now}::bigint - b.refilled_at) * r.rate / 1000.0) AS tokens
              FROM provider_buckets b JOIN r ON r.key = b.key
             ORDER BY b.key FOR UPDATE OF b)
          UPDATE provider_buckets b
             SET tokens = cur.tokens - GREATEST(0, LEAST(cur.want, floor(cur.tokens))),
                 refilled_at = GREATEST(b.refilled_at, ${now}::bigint)
            FROM cur WHERE b.key = cur.key
          RETURNING cur.ord, GREATEST(0, LEAST(cur.want, floor(cur.tokens)))::int AS granted`;
      });
      const granted = new Array<number>(requests.length).fill(0);
      for (const row of rows) granted[row.ord] = row.granted;
      return granted;
    },
    async setCircuit(key, openUntil, now) {
      await sql`INSERT INTO provider_circuits (key, open_until, updated_at) VALUES (${key}, ${openUntil}, ${now})
        ON CONFLICT (key) DO UPDATE SET open_until = excluded.open_until, updated_at = excluded.updated_at`;
    },
    async openCircuits(now) {
      const rows = await sql<{ key: string; openUntil: number }[]>`
        SELECT key, open_until AS "openUntil" FROM provider_circuits WHERE open_until > ${now} ORDER BY key`;
      return [...rows];
    },
  };
}
