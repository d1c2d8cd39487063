import type { Channel } from '../../notifications/model.ts';

/** The Liquid source fields of a template; which ones apply depends on the channel. */
export interface TemplateContent {
  subject?: string;
  text?: string;
  html?: string;
  title?: string;
  body?: string;
}

/** One immutable version of a template. Times are epoch milliseconds. */
export interface TemplateRecord {
  tenant: string;
  key: string;
  channel: Channel;
  version: number;
  content: TemplateContent;
  /** The variables the editor previews this version with (saved with it), or null. */
  sampleVariables: Record<string, unknown> | null;
  /** When the key was first created (of the current head row). */
  createdAt: number;
  /** When this version was saved. */
  updatedAt: number;
}

/** Template storage: a head row per (tenant, key) pointing at immutable versions. */
export interface TemplateStore {
  /** Creates version 1 (or the next number after a deleted key's versions); null if the key exists. */
  create(
    tenant: string,
    key: string,
    channel: Channel,
    content: TemplateContent,
    now: number,
    sampleVariables?: Record<string, unknown> | null,
  ): Promise<TemplateRecord | null>;
  /** Saves a new current version; null if the key does not exist. */
  update(
    tenant: string,
    key: string,
    channel: Channel,
    content: TemplateContent,
    now: number,
    sampleVariables?: Record<string, unknown> | null,
  ): Promise<TemplateRecord | null>;
  /** The current version, or null when the key does not exist (or was deleted). */
  get(tenant: string, key: string): Promise<TemplateRecord | null>;
  /** One pinned version, kept even after the key is deleted. */
  getVersion(tenant: string, key: string, version: number): Promise<TemplateRecord | null>;
  /** Current versions of a tenant's templates by key order, after `afterKey`. */
  list(tenant: string, limit: number, afterKey?: string): Promise<TemplateRecord[]>;
  /** Removes the key (its versions stay for pinned notifications); false if it did not exist. */
  delete(tenant: string, key: string): Promise<boolean>;
}
