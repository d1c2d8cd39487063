import type { WorkflowStore } from '../port/workflows.ts';
import { WORKFLOW_CURRENT, WORKFLOW_VERSION, type WorkflowRow, workflowFromRow } from '../rows-workflows.ts';
import type { Query, Sql } from './connect.ts';

/** The PostgreSQL workflow store; same semantics as the SQLite one. Versions are never updated or deleted. */
export function createPostgresWorkflows(sql: Sql): WorkflowStore {
  const current = (q: Query, tenant: string, key: string) =>
    q<WorkflowRow[]>`${q.unsafe(WORKFLOW_CURRENT)} WHERE w.tenant = ${tenant} AND w.key = ${key}`;

  return {
    put: (tenant, key, { name, category, steps }, now) =>
      sql.begin(async (tx) => {
        // SQLite serialises writers; here two instances saving one key at once would pick the
        // same next version, so each key's saves take turns on a transaction-scoped advisory lock
        // (apart from templates' locks by the prefix).
        await tx`SELECT pg_advisory_xact_lock(hashtext(${tenant}), hashtext(${`workflow:${key}`}))`;
        const [head] = await tx`SELECT 1 FROM workflows WHERE tenant = ${tenant} AND key = ${key}`;
        const [next] = await tx<{ v: number }[]>`
          SELECT COALESCE(MAX(version), 0) + 1 AS v FROM workflow_versions WHERE tenant = ${tenant} AND key = ${key}`;
        const v = next?.v ?? 1;
        await tx`INSERT INTO workflow_versions (tenant, key, version, name, category, steps, created_at)
                 VALUES (${tenant}, ${key}, ${v}, ${name}, ${category}, ${JSON.stringify(steps)}, ${now})`;
        if (head) {
          await tx`UPDATE workflows SET current_version = ${v}, updated_at = ${now}
                    WHERE tenant = ${tenant} AND key = ${key}`;
        } else {
          await tx`INSERT INTO workflows (tenant, key, current_version, created_at, updated_at)
                   VALUES (${tenant}, ${key}, ${v}, ${now}, ${now})`;
        }
        const [row] = await current(tx, tenant, key);
        return { workflow: workflowFromRow(row as WorkflowRow), created: !head };
      }),
    async get(tenant, key, v) {
      const [row] =
        v === undefined
          ? await current(sql, tenant, key)
          : await sql<WorkflowRow[]>`
              ${sql.unsafe(WORKFLOW_VERSION)} WHERE v.tenant = ${tenant} AND v.key = ${key} AND v.version = ${v}`;
      return row ? workflowFromRow(row) : null;
    },
    async list(tenant, { limit, cursor = '' }) {
      const rows = await sql<WorkflowRow[]>`
        ${sql.unsafe(WORKFLOW_CURRENT)} WHERE w.tenant = ${tenant} AND w.key > ${cursor} ORDER BY w.key LIMIT ${limit}`;
      return rows.map(workflowFromRow);
    },
    async delete(tenant, key) {
      return (await sql`DELETE FROM workflows WHERE tenant = ${tenant} AND key = ${key}`).count > 0;
    },
  };
}
