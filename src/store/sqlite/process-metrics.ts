import type { ProcessMetricsRow, ProcessMetricsStore } from '../port/process-metrics.ts';
import type { SqliteDb } from './open.ts';

type Row = { process_id: string; roles: string; updated_at: number; snapshot: string };
const fromRow = (r: Row): ProcessMetricsRow => ({
  processId: r.process_id,
  roles: r.roles,
  updatedAt: r.updated_at,
  snapshot: r.snapshot,
});

export function createSqliteProcessMetrics(db: SqliteDb): ProcessMetricsStore {
  const upsert = db.prepare(`INSERT INTO process_metrics (process_id, roles, updated_at, snapshot)
    VALUES (?, ?, ?, ?) ON CONFLICT (process_id)
    DO UPDATE SET roles = excluded.roles, updated_at = excluded.updated_at, snapshot = excluded.snapshot`);
  const recent = db.prepare('SELECT * FROM process_metrics WHERE updated_at >= ? ORDER BY process_id');
  const drop = db.prepare('DELETE FROM process_metrics WHERE process_id = ? OR updated_at < ?');
  return {
    async publish(row) {
      upsert.run(row.processId, row.roles, row.updatedAt, row.snapshot);
    },
    async since(since) {
      return (recent.all(since) as Row[]).map(fromRow);
    },
    async remove(processId, before) {
      drop.run(processId, before);
    },
  };
}
