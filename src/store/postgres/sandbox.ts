import type { SandboxStore } from '../port/sandbox.ts';
import { scannedPage } from '../port/scanned-page.ts';
import { type SandboxRow as Row, sandboxFromRow } from '../rows.ts';
import type { Sql } from './connect.ts';
import { scanFloor } from './scan-floor.ts';

/** Sandbox messages in the shared database, so every process (and the UI behind any API) sees them. */
export function createPostgresSandbox(sql: Sql): SandboxStore {
  return {
    async list(q) {
      const range = sql`TRUE
        ${q.tenant === undefined ? sql`` : sql`AND tenant = ${q.tenant}`}
        ${q.before === undefined ? sql`` : sql`AND id < ${q.before}`}`;
      // A channel alone filters the tenant's messages (one notification's are few, by its index).
      const floor =
        q.channel !== undefined && q.notificationId === undefined
          ? await scanFloor(sql, 'sandbox_messages', 'id', range)
          : undefined;
      const rows = await sql<Row[]>`SELECT * FROM sandbox_messages WHERE ${range}
        ${floor === undefined ? sql`` : sql`AND id >= ${floor}`}
        ${q.channel === undefined ? sql`` : sql`AND channel = ${q.channel}`}
        ${q.notificationId === undefined ? sql`` : sql`AND notification_id = ${q.notificationId}`}
        ORDER BY id DESC LIMIT ${q.limit}`;
      return scannedPage(rows.map(sandboxFromRow), q.limit, floor);
    },
  };
}
