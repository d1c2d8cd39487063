import type { WorkflowDefinition } from '../../workflows/model.ts';
import type { WorkflowStore } from '../port/workflows.ts';
import { WORKFLOW_CURRENT, WORKFLOW_VERSION, type WorkflowRow, workflowFromRow } from '../rows-workflows.ts';
import type { SqliteDb } from './open.ts';

/** The SQLite workflow store. Versions are never updated or deleted. */
export function createSqliteWorkflows(db: SqliteDb): WorkflowStore {
  const head = db.prepare('SELECT 1 FROM workflows WHERE tenant = ? AND key = ?');
  const nextVersion = db.prepare(
    'SELECT COALESCE(MAX(version), 0) + 1 AS v FROM workflow_versions WHERE tenant = ? AND key = ?',
  );
  const insertVersion = db.prepare(
    'INSERT INTO workflow_versions (tenant, key, version, name, category, steps, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const insertHead = db.prepare(
    'INSERT INTO workflows (tenant, key, current_version, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
  );
  const moveHead = db.prepare(
    'UPDATE workflows SET current_version = ?, updated_at = ? WHERE tenant = ? AND key = ?',
  );
  const current = db.prepare(`${WORKFLOW_CURRENT} WHERE w.tenant = ? AND w.key = ?`);
  const version = db.prepare(`${WORKFLOW_VERSION} WHERE v.tenant = ? AND v.key = ? AND v.version = ?`);
  const list = db.prepare(`${WORKFLOW_CURRENT} WHERE w.tenant = ? AND w.key > ? ORDER BY w.key LIMIT ?`);
  const remove = db.prepare('DELETE FROM workflows WHERE tenant = ? AND key = ?');

  const save = db.transaction((tenant: string, key: string, definition: WorkflowDefinition, now: number) => {
    const existed = head.get(tenant, key) !== undefined;
    const v = (nextVersion.get(tenant, key) as { v: number }).v;
    const { name, category, steps } = definition;
    insertVersion.run(tenant, key, v, name, category, JSON.stringify(steps), now);
    if (existed) moveHead.run(v, now, tenant, key);
    else insertHead.run(tenant, key, v, now, now);
    return { workflow: workflowFromRow(current.get(tenant, key) as WorkflowRow), created: !existed };
  });

  return {
    async put(tenant, key, definition, now) {
      return save.immediate(tenant, key, definition, now);
    },
    async get(tenant, key, v) {
      const row = (v === undefined ? current.get(tenant, key) : version.get(tenant, key, v)) as
        | WorkflowRow
        | undefined;
      return row ? workflowFromRow(row) : null;
    },
    async list(tenant, { limit, cursor = '' }) {
      return (list.all(tenant, cursor, limit) as WorkflowRow[]).map(workflowFromRow);
    },
    async delete(tenant, key) {
      return remove.run(tenant, key).changes > 0;
    },
  };
}
