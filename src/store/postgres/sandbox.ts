import type { SandboxStore } from '../port/sandbox.ts';
import { type SandboxRow as Row, sandboxFromRow } from '../rows.ts';
import type { Sql } from './connect.ts';

/** Sandbox messages in the shared database, so every process (and the UI behind any API) sees them. */
export function createPostgresSandbox(sql: Sql): SandboxStore {
  return {
    async list(q) {
      const rows = await sql<Row[]>`SELECT * FROM sandbox_messages WHERE TRUE
        ${q.tenant === undefined ? sql`` : sql`AND tenant = ${q.tenant}`}
        ${q.channel === undefined ? sql`` : sql`AND channel = ${q.channel}`}
        ${q.notificationId === undefined ? sql`` : sql`AND notification_id = ${q.notificationId}`}
        ${q.before === undefined ? sql`` : sql`AND id < ${q.before}`}
        ORDER BY id DESC LIMIT ${q.limit}`;
      return rows.map(sandboxFromRow);
    },
  };
}
