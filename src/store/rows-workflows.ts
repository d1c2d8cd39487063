import type { WorkflowRecord, WorkflowStep } from '../workflows/model.ts';

type Int = number | string;

/** A workflow version as both adapters select it (WORKFLOW_CURRENT / WORKFLOW_VERSION). */
export interface WorkflowRow {
  key: string;
  version: number;
  name: string | null;
  category: string | null;
  steps: string;
  created_at: Int;
  updated_at: Int;
}

/** The current version of each key: the head row's times, the version's content. */
export const WORKFLOW_CURRENT = `SELECT w.key, v.version, v.name, v.category, v.steps, w.created_at, v.created_at AS updated_at
  FROM workflows w JOIN workflow_versions v
    ON v.tenant = w.tenant AND v.key = w.key AND v.version = w.current_version`;

/** One version by number, whether or not the key still exists. */
export const WORKFLOW_VERSION = `SELECT v.key, v.version, v.name, v.category, v.steps, v.created_at, v.created_at AS updated_at
  FROM workflow_versions v`;

export function workflowFromRow(row: WorkflowRow): WorkflowRecord {
  return {
    key: row.key,
    version: Number(row.version),
    name: row.name,
    category: row.category,
    steps: JSON.parse(row.steps) as WorkflowStep[],
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
