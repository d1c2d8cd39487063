import type {
  CategoryRecord,
  ChannelChoices,
  Preferences,
  RecipientProfile,
  RecipientRecord,
} from '../../recipients/model.ts';

/** What identifies one recipient: the tenant and the caller's own ID. */
export interface RecipientKey {
  tenant: string;
  id: string;
}

/** A key as one string, for maps of recipients found by a look-up. */
export const recipientKeyText = (k: RecipientKey) => `${k.tenant}\u0000${k.id}`;

/**
 * A tenant's recipients (src/recipients, docs/recipients.md). A profile is replaced whole; its
 * preferences are kept apart and survive a replacement.
 */
export interface RecipientStore {
  /**
   * Creates or replaces each profile, in one transaction; returns each stored record and whether
   * it was created, in input order. An ID given twice: the last profile stands.
   */
  put(
    tenant: string,
    entries: ReadonlyArray<{ id: string; profile: RecipientProfile }>,
    now: number,
  ): Promise<Array<{ record: RecipientRecord; created: boolean }>>;
  /**
   * Replaces a profile only if it is still `expected` (compare-and-set, for a merge patch applied
   * to what was read before); null when the recipient is gone or its profile changed meanwhile.
   * The preferences stay. Profiles are compared as stored: the JSON text `put` wrote.
   */
  replaceIf(
    tenant: string,
    id: string,
    expected: RecipientProfile,
    profile: RecipientProfile,
    now: number,
  ): Promise<RecipientRecord | null>;
  /**
   * `put` for bulk writes (POST /recipients/batch, an import), answering only whether each was
   * created, in input order: nothing is read back. An entry with `preferences` (an import of an
   * export's line) replaces them too, in the same transaction; without, they stay.
   */
  write(
    tenant: string,
    entries: ReadonlyArray<{ id: string; profile: RecipientProfile; preferences?: Preferences }>,
    now: number,
  ): Promise<boolean[]>;
  /** One recipient, or null. */
  get(tenant: string, id: string): Promise<RecipientRecord | null>;
  /**
   * The IDs among `ids` that name a recipient of the tenant, in no order (one statement, whatever
   * their number; read from the primary key alone, no profile parsed): a trigger's or a batch's check.
   */
  known(tenant: string, ids: readonly string[]): Promise<string[]>;
  /** Erases a recipient: its profile, preferences and topic memberships. False when there was none. */
  remove(tenant: string, id: string): Promise<boolean>;
  /** A tenant's recipients in ID order, after `after` (exclusive). */
  list(tenant: string, options: { limit: number; after?: string }): Promise<RecipientRecord[]>;
  /** Replaces a recipient's preferences; null when there is no such recipient. */
  setPreferences(
    tenant: string,
    id: string,
    preferences: Preferences,
    now: number,
  ): Promise<RecipientRecord | null>;
  /**
   * Changes a recipient's preferences from what they are, in one transaction (the read, `change`
   * and the write), so that no concurrent change is lost between them: a merge patch, a post of
   * the preferences page. `change` is synchronous and throws nothing. Null when there is no such
   * recipient.
   */
  changePreferences(
    tenant: string,
    id: string,
    change: (current: Preferences) => Preferences,
    now: number,
  ): Promise<RecipientRecord | null>;
}

/** What a category is declared with. */
export interface CategoryFields {
  description: string | null;
  required: boolean;
  defaultChannels: ChannelChoices;
}

/** A tenant's declared categories (docs/recipients.md). */
export interface CategoryStore {
  /** Creates or replaces a category; says whether it was created. */
  put(
    tenant: string,
    name: string,
    fields: CategoryFields,
    now: number,
  ): Promise<{ record: CategoryRecord; created: boolean }>;
  get(tenant: string, name: string): Promise<CategoryRecord | null>;
  /** The categories among these (tenant, name) pairs (one statement). */
  among(keys: ReadonlyArray<{ tenant: string; name: string }>): Promise<CategoryRecord[]>;
  /** A tenant's categories in name order, after `after` (exclusive). */
  list(tenant: string, options: { limit: number; after?: string }): Promise<CategoryRecord[]>;
  /** False when there was none. */
  remove(tenant: string, name: string): Promise<boolean>;
}
