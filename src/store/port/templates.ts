import type { Channel } from '../../notifications/model.ts';

/** The Liquid source fields of a template; which ones apply depends on the channel. */
export interface TemplateContent {
  subject?: string;
  text?: string;
  html?: string;
  title?: string;
  body?: string;
  url?: string;
  /** inapp only: JSON stored with each message as given (no Liquid; docs/inbox.md). */
  data?: Record<string, unknown>;
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
  /**
   * The category a notification naming this version takes when it names none (docs/preferences.md),
   * or null.
   */
  category: string | null;
  /** When the key was first created (of the current head row). */
  createdAt: number;
  /** When this version was saved. */
  updatedAt: number;
}

/**
 * A locale variant of one template version (docs/localization.md): the same fields as the template, for
 * one canonical BCP 47 tag. Immutable like its version: a variant's change is a new version.
 */
export interface TemplateVariant {
  key: string;
  version: number;
  locale: string;
  content: TemplateContent;
  /** When this variant's content was saved (kept as the variant is carried to later versions). */
  updatedAt: number;
}

/** What removing a variant did: the new version without it, or which of the two was missing. */
export type VariantRemoval = TemplateRecord | 'no-template' | 'no-variant';

/**
 * Template storage: a head row per (tenant, key) pointing at immutable versions. Each version
 * holds its locale variants (docs/decisions/0020-locale-variants-per-version.md): a new version
 * carries the current one's variants forward, and saving or removing a variant saves a new
 * version, so a notification pinned to version N renders N's variants whatever changes after.
 */
export interface TemplateStore {
  /** Creates version 1 (or the next number after a deleted key's versions); null if the key exists. */
  create(
    tenant: string,
    key: string,
    channel: Channel,
    content: TemplateContent,
    now: number,
    sampleVariables?: Record<string, unknown> | null,
    category?: string | null,
  ): Promise<TemplateRecord | null>;
  /** Saves a new current version; null if the key does not exist. */
  update(
    tenant: string,
    key: string,
    channel: Channel,
    content: TemplateContent,
    now: number,
    sampleVariables?: Record<string, unknown> | null,
    category?: string | null,
  ): Promise<TemplateRecord | null>;
  /** The current version, or null when the key does not exist (or was deleted). */
  get(tenant: string, key: string): Promise<TemplateRecord | null>;
  /** One pinned version, kept even after the key is deleted. */
  getVersion(tenant: string, key: string, version: number): Promise<TemplateRecord | null>;
  /** Current versions of a tenant's templates by key order, after `afterKey`. */
  list(tenant: string, limit: number, afterKey?: string): Promise<TemplateRecord[]>;
  /** Removes the key (its versions stay for pinned notifications); false if it did not exist. */
  delete(tenant: string, key: string): Promise<boolean>;
  /**
   * Saves a new current version with the current one's content and variants, `locale`'s set to
   * `content` (added or replaced); null if the key does not exist.
   */
  putVariant(
    tenant: string,
    key: string,
    locale: string,
    content: TemplateContent,
    now: number,
  ): Promise<TemplateRecord | null>;
  /** Saves a new current version without `locale`'s variant, when the key has one. */
  removeVariant(tenant: string, key: string, locale: string, now: number): Promise<VariantRemoval>;
  /** The variants of these versions of the tenant's templates, by key, version and locale. */
  variants(
    tenant: string,
    versions: ReadonlyArray<{ key: string; version: number }>,
  ): Promise<TemplateVariant[]>;
}
