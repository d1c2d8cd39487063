import type { ProcessMetricsRow, ProcessMetricsStore } from '../port/process-metrics.ts';
import type { Sql } from './connect.ts';

type Row = { process_id: string; roles: string; updated_at: string | number; snapshot: string };

export function createPostgresProcessMetrics(sql: Sql): ProcessMetricsStore {
  return {
    async publish(row) {
      await sql`INSERT INTO process_metrics (process_id, roles, updated_at, snapshot)
        VALUES (${row.processId}, ${row.roles}, ${row.updatedAt}, ${row.snapshot})
        ON CONFLICT (process_id)
        DO UPDATE SET roles = excluded.roles, updated_at = excluded.updated_at, snapshot = excluded.snapshot`;
    },
    async since(since) {
      const rows = await sql<
        Row[]
      >`SELECT * FROM process_metrics WHERE updated_at >= ${since} ORDER BY process_id`;
      return rows.map(
        (r): ProcessMetricsRow => ({
          processId: r.process_id,
          roles: r.roles,
          updatedAt: Number(r.updated_at),
          snapshot: r.snapshot,
        }),
      );
    },
    async remove(processId, before) {
      await sql`DELETE FROM process_metrics WHERE process_id = ${processId} OR updated_at < ${before}`;
    },
  };
}
