import type { SandboxStore } from '../port/sandbox.ts';
import { type SandboxRow as Row, sandboxFromRow } from '../rows.ts';
import { whereOf } from './filters.ts';
import type { SqliteDb } from './open.ts';

/** Lists sandbox messages newest first; filters are optional, so the query is built per call. */
export function createSqliteSandbox(db: SqliteDb): SandboxStore {
  return {
    async list(query) {
      const { where, params } = whereOf([
        ['tenant = ?', query.tenant],
        ['channel = ?', query.channel],
        ['notification_id = ?', query.notificationId],
        ['id < ?', query.before],
      ]);
      const sql = `SELECT * FROM sandbox_messages ${where} ORDER BY id DESC LIMIT ?`;
      const rows = db.prepare(sql).all(...params, query.limit) as Row[];
      return rows.map(sandboxFromRow);
    },
  };
}
