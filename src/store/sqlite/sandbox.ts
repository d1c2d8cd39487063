import type { Channel } from '../../notifications/model.ts';
import type { SandboxMessage, SandboxStore } from '../port/sandbox.ts';
import type { SqliteDb } from './open.ts';

interface Row {
  id: number;
  notification_id: string;
  tenant: string;
  channel: string;
  recipient: string;
  content: string;
  attempt: number;
  at: number;
}

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
      return rows.map(
        (r): SandboxMessage => ({
          id: r.id,
          notificationId: r.notification_id,
          tenant: r.tenant,
          channel: r.channel as Channel,
          recipient: JSON.parse(r.recipient),
          content: JSON.parse(r.content),
          attempt: r.attempt,
          at: r.at,
        }),
      );
    },
  };
}
