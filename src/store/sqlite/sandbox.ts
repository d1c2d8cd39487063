import type { SandboxStore } from '../port/sandbox.ts';
import { scannedPage } from '../port/scanned-page.ts';
import { type SandboxRow as Row, sandboxFromRow } from '../rows.ts';
import { byText, createListWhere } from './filters.ts';
import type { SqliteDb } from './open.ts';

/** Lists sandbox messages newest first; filters are optional, so the query is built per call. */
export function createSqliteSandbox(db: SqliteDb): SandboxStore {
  const listWhere = createListWhere(db);
  const statement = byText((sql) => db.prepare(sql));
  return {
    async list(query) {
      // A channel alone filters the tenant's messages (one notification's are few, by its index).
      const { floor, where, params } = listWhere(
        'sandbox_messages',
        'id',
        [
          ['tenant = ?', query.tenant],
          ['id < ?', query.before],
        ],
        [
          ['channel = ?', query.channel],
          ['notification_id = ?', query.notificationId],
        ],
        query.channel !== undefined && query.notificationId === undefined,
      );
      const rows = statement(`SELECT * FROM sandbox_messages ${where} ORDER BY id DESC LIMIT ?`).all(
        ...params,
        query.limit,
      ) as Row[];
      return scannedPage(rows.map(sandboxFromRow), query.limit, floor);
    },
  };
}
