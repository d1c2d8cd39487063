import type { WorkflowDefinition, WorkflowRecord } from '../../workflows/model.ts';

/** What a save did: the version it made, and whether the key was new (201) or had a current version (200). */
export interface WorkflowSave {
  workflow: WorkflowRecord;
  created: boolean;
}

/**
 * Workflow definitions (docs/workflows.md): a head row per (tenant, key) pointing at immutable
 * versions, as templates are stored. A run keeps the version it started with, so versions outlive
 * a delete and a key saved again after one continues their numbers.
 */
export interface WorkflowStore {
  /**
   * Saves `definition` (already validated) as the key's next version and makes it current; every
   * save is a new version, as a template's PUT is.
   */
  put(tenant: string, key: string, definition: WorkflowDefinition, now: number): Promise<WorkflowSave>;
  /**
   * Without `version`, the current version (null when the key does not exist or was deleted);
   * with one, that version, kept after a delete.
   */
  get(tenant: string, key: string, version?: number): Promise<WorkflowRecord | null>;
  /** Current versions of the tenant's workflows by key, after `cursor` (the last key of the previous page). */
  list(tenant: string, page: { limit: number; cursor?: string }): Promise<WorkflowRecord[]>;
  /** Removes the key (its versions stay for the runs that use them); false if it had no current version. */
  delete(tenant: string, key: string): Promise<boolean>;
}
