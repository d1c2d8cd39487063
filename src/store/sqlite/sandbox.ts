import type { SandboxStore } from '../port/sandbox.ts';
import { scannedPage } from '../port/scanned-page.ts';
import { type SandboxRow as Row, sandboxFromRow } from '../rows.ts';
import { createScanFloor, whereOf } from './filters.ts';
import type { SqliteDb } from './open.ts';

/** Lists sandbox messages newest first; filters are optional, so the query is built per call. */
export function createSqliteSandbox(db: SqliteDb): SandboxStore {
  const scanFloor = createScanFloor(db);
  return {
    async list(query) {
      const bounds: Array<readonly [string, unknown]> = [
        ['tenant = ?', query.tenant],
        ['id < ?', query.before],
      ];
      // A channel alone filters the tenant's messages (one notification's are few, by its index).
      const floor =
        query.channel !== undefined && query.notificationId === undefined
          ? scanFloor('sandbox_messages', 'id', bounds)
          : undefined;
      const { where, params } = whereOf([
        ...bounds,
        ['id >= ?', floor],
        ['channel = ?', query.channel],
        ['notification_id = ?', query.notificationId],
      ]);
      const sql = `SELECT * FROM sandbox_messages ${where} ORDER BY id DESC LIMIT ?`;
      const rows = db.prepare(sql).all(...params, query.limit) as Row[];
      return scannedPage(rows.map(sandboxFromRow), query.limit, floor);
    },
  };
}
