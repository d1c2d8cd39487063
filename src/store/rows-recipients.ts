import type { Recipient } from '../notifications/model.ts';
import type {
  CategoryRecord,
  ChannelChoices,
  Preferences,
  RecipientProfile,
  RecipientRecord,
} from '../recipients/model.ts';
import { suppressionKey } from '../suppressions/model.ts';

/** A recipients row as both adapters select it (JSON as text). */
export interface RecipientRow {
  tenant: string;
  recipient_id: string;
  profile: string;
  preferences: string;
  created_at: number | string;
  updated_at: number | string;
}

/** The columns RecipientRow reads, for both adapters' SELECTs. */
export const RECIPIENT_COLUMNS = 'tenant, recipient_id, profile, preferences, created_at, updated_at';

export function recipientFromRow(row: RecipientRow): RecipientRecord {
  return recipientWith(row, JSON.parse(row.preferences) as Preferences);
}

/** A recipients row as a record, its preferences already known (a claim's shared NO_PREFERENCES). */
export function recipientWith(row: RecipientRow, preferences: Preferences): RecipientRecord {
  return {
    tenant: row.tenant,
    id: row.recipient_id,
    profile: JSON.parse(row.profile) as RecipientProfile,
    preferences,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** A categories row as both adapters select it. */
export interface CategoryRow {
  tenant: string;
  name: string;
  description: string | null;
  required: number | boolean;
  default_channels: string;
  created_at: number | string;
  updated_at: number | string;
}

export const CATEGORY_COLUMNS =
  'tenant, name, description, required, default_channels, created_at, updated_at';

export function categoryFromRow(row: CategoryRow): CategoryRecord {
  return {
    tenant: row.tenant,
    name: row.name,
    description: row.description,
    required: Boolean(row.required),
    defaultChannels: JSON.parse(row.default_channels) as ChannelChoices,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/**
 * A stored profile (JSON) without the push targets whose suppression keys are `keys`, as JSON;
 * undefined when it has none of them (nothing to write).
 */
export function withoutTargets(profileText: string, keys: readonly string[]): string | undefined {
  const profile = JSON.parse(profileText) as RecipientProfile;
  const targets = profile.push ?? [];
  const kept = targets.filter((t) => {
    const key = suppressionKey(t as Recipient);
    return key === undefined || !keys.includes(key);
  });
  if (kept.length === targets.length) return undefined;
  return JSON.stringify({ ...profile, push: kept });
}
