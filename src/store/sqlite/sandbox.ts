import type { SandboxStore } from '../port/sandbox.ts';
import { type SandboxRow as Row, sandboxFromRow } from '../rows.ts';
import type { SqliteDb } from './open.ts';

/** Lists sandbox messages newest first; filters are optional, so the query is built per call. */
export function createSqliteSandbox(db: SqliteDb): SandboxStore {
  return {
    async list(query) {
      const where: string[] = [];
      const params: Array<string | number> = [];
      const add = (clause: string, value: string | number | undefined) => {
        if (value === undefined) return;
        where.push(clause);
        params.push(value);
      };
      add('tenant = ?', query.tenant);
      add('channel = ?', query.channel);
      add('notification_id = ?', query.notificationId);
      add('id < ?', query.before);
      const sql = `SELECT * FROM sandbox_messages ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY id DESC LIMIT ?`;
      const rows = db.prepare(sql).all(...params, query.limit) as Row[];
      return rows.map(sandboxFromRow);
    },
  };
}
