import type { GoneTargets } from '../../notifications/status.ts';
import { NO_PREFERENCES, type Preferences, type RecipientProfile } from '../../recipients/model.ts';
import type { CategoryStore, RecipientKey, RecipientStore } from '../port/recipients.ts';
import {
  CATEGORY_COLUMNS,
  type CategoryRow,
  categoryFromRow,
  RECIPIENT_COLUMNS,
  type RecipientRow,
  recipientFromRow,
  withoutTargets,
} from '../rows-recipients.ts';
import type { Query, Sql } from './connect.ts';
import { eraseInboxOn } from './inbox.ts';
import { leaveTopicsOn } from './topics.ts';

const json = (value: unknown) => JSON.stringify(value);
const NONE = json(NO_PREFERENCES);

/** The recipients among `keys`, inside the caller's transaction (a claim's). One statement. */
export async function recipientsAmongOn(tx: Query, keys: readonly RecipientKey[]) {
  if (keys.length === 0) return [];
  const rows = await tx<RecipientRow[]>`
    SELECT r.tenant, r.recipient_id, r.profile, r.preferences, r.created_at, r.updated_at
    FROM json_to_recordset(${json(keys)}::text::json) AS k(tenant text, id text)
    JOIN recipients r ON r.tenant = k.tenant AND r.recipient_id = k.id`;
  return rows.map(recipientFromRow);
}

type Entries = ReadonlyArray<{ id: string; profile: RecipientProfile; preferences?: Preferences }>;

/**
 * Creates or replaces each profile in one statement, returning `columns` of each row written and
 * whether it was created. An ID given twice is inserted once with its last profile (one key
 * twice in one INSERT ... ON CONFLICT is an error), as SQLite's turns leave it.
 */
function upsert<R>(sql: Query, tenant: string, entries: Entries, now: number, columns: string) {
  const input = entries.map((e, ord) => ({ id: e.id, profile: json(e.profile), ord }));
  return sql<Array<R & { recipient_id: string; created: boolean }>>`
    INSERT INTO recipients (tenant, recipient_id, profile, preferences, created_at, updated_at)
    SELECT ${tenant}, id, profile, ${NONE}, ${now}::bigint, ${now}::bigint FROM (
      SELECT DISTINCT ON (id) id, profile, ord
      FROM json_to_recordset(${json(input)}::text::json) AS e(id text, profile text, ord int)
      ORDER BY id, ord DESC) d
    ORDER BY ord
    ON CONFLICT (tenant, recipient_id) DO UPDATE SET profile = excluded.profile, updated_at = excluded.updated_at
    RETURNING ${sql.unsafe(columns)}, (xmax = 0) AS created`;
}

/** Each entry's row, and whether it was created: an ID given twice is created once, at its first. */
function inInputOrder<R extends { recipient_id: string; created: boolean }>(entries: Entries, rows: R[]) {
  const byId = new Map(rows.map((r) => [r.recipient_id, r]));
  const seen = new Set<string>();
  return entries.map(({ id }) => {
    const row = byId.get(id) as R;
    const created = row.created && !seen.has(id);
    seen.add(id);
    return { row, created };
  });
}

/** The declared categories among `keys`, inside the caller's transaction (a claim's). One statement. */
export async function categoriesAmongOn(tx: Query, keys: ReadonlyArray<{ tenant: string; name: string }>) {
  if (keys.length === 0) return [];
  const rows = await tx<CategoryRow[]>`
    SELECT c.tenant, c.name, c.description, c.required, c.default_channels, c.created_at, c.updated_at
    FROM json_to_recordset(${json(keys)}::text::json) AS k(tenant text, name text)
    JOIN categories c ON c.tenant = k.tenant AND c.name = k.name`;
  return rows.map(categoryFromRow);
}

/**
 * Removes gone push targets from their profiles, inside the caller's transaction (a
 * completion's). Rare (a target that answered gone), so a read and a write per profile; the row
 * is locked so that a concurrent PUT of the profile is not overwritten with an older one.
 */
export async function dropPushTargetsOn(tx: Query, gone: readonly GoneTargets[], now: number) {
  for (const g of gone) {
    const [row] = await tx<{ profile: string }[]>`
      SELECT profile FROM recipients WHERE tenant = ${g.tenant} AND recipient_id = ${g.id} FOR UPDATE`;
    if (!row) continue;
    const kept = withoutTargets(row.profile, g.keys);
    if (kept !== undefined)
      await tx`UPDATE recipients SET profile = ${kept}, updated_at = ${now}
        WHERE tenant = ${g.tenant} AND recipient_id = ${g.id}`;
  }
}

/** The PostgreSQL implementation of the recipient port; same semantics as the SQLite one. */
export function createPostgresRecipients(sql: Sql): RecipientStore {
  return {
    async put(tenant, entries, now) {
      if (entries.length === 0) return [];
      const rows = await upsert<RecipientRow>(sql, tenant, entries, now, RECIPIENT_COLUMNS);
      return inInputOrder(entries, rows).map(({ row, created }) => ({
        record: recipientFromRow(row),
        created,
      }));
    },
    async write(tenant, entries, now) {
      if (entries.length === 0) return [];
      const given = entries.filter((e) => e.preferences !== undefined);
      if (given.length === 0) {
        const rows = await upsert<object>(sql, tenant, entries, now, 'recipient_id');
        return inInputOrder(entries, rows).map(({ created }) => created);
      }
      // An import of an export's lines: the preferences given replace theirs, with the profiles.
      return sql.begin(async (tx) => {
        const rows = await upsert<object>(tx, tenant, entries, now, 'recipient_id');
        // An ID given twice: its last preferences, as its last profile.
        const last = new Map(given.map((e) => [e.id, json(e.preferences)]));
        const input = [...last].map(([id, preferences]) => ({ id, preferences }));
        await tx`UPDATE recipients r SET preferences = e.preferences
          FROM json_to_recordset(${json(input)}::text::json) AS e(id text, preferences text)
          WHERE r.tenant = ${tenant} AND r.recipient_id = e.id`;
        return inInputOrder(entries, rows).map(({ created }) => created);
      });
    },
    async replaceIf(tenant, id, expected, profile, now) {
      const [row] = await sql<RecipientRow[]>`
        UPDATE recipients SET profile = ${json(profile)}, updated_at = ${now}
        WHERE tenant = ${tenant} AND recipient_id = ${id} AND profile = ${json(expected)}
        RETURNING ${sql.unsafe(RECIPIENT_COLUMNS)}`;
      return row ? recipientFromRow(row) : null;
    },
    async get(tenant, id) {
      const [row] = await sql<RecipientRow[]>`
        SELECT ${sql.unsafe(RECIPIENT_COLUMNS)} FROM recipients WHERE tenant = ${tenant} AND recipient_id = ${id}`;
      return row ? recipientFromRow(row) : null;
    },
    async known(tenant, ids) {
      if (ids.length === 0) return [];
      const rows = await sql<Array<{ recipient_id: string }>>`
        SELECT recipient_id FROM recipients WHERE tenant = ${tenant} AND recipient_id = ANY(${ids as string[]}::text[])`;
      return rows.map((r) => r.recipient_id);
    },
    async remove(tenant, id) {
      // The profile, its preferences, its topic memberships and its inbox go together.
      return sql.begin(async (tx) => {
        await leaveTopicsOn(tx, tenant, id);
        await eraseInboxOn(tx, tenant, id);
        const rows = await tx`DELETE FROM recipients WHERE tenant = ${tenant} AND recipient_id = ${id}`;
        return rows.count > 0;
      });
    },
    async list(tenant, options) {
      const rows = await sql<RecipientRow[]>`
        SELECT ${sql.unsafe(RECIPIENT_COLUMNS)} FROM recipients
        WHERE tenant = ${tenant} AND recipient_id > ${options.after ?? ''}
        ORDER BY recipient_id LIMIT ${options.limit}`;
      return rows.map(recipientFromRow);
    },
    async setPreferences(tenant, id, preferences, now) {
      const [row] = await sql<RecipientRow[]>`
        UPDATE recipients SET preferences = ${json(preferences)}, updated_at = ${now}
        WHERE tenant = ${tenant} AND recipient_id = ${id}
        RETURNING ${sql.unsafe(RECIPIENT_COLUMNS)}`;
      return row ? recipientFromRow(row) : null;
    },
    async changePreferences(tenant, id, apply, now) {
      // The row is locked from the read to the write: a concurrent change waits for this one.
      return sql.begin(async (tx) => {
        const [row] = await tx<RecipientRow[]>`
          SELECT ${tx.unsafe(RECIPIENT_COLUMNS)} FROM recipients
          WHERE tenant = ${tenant} AND recipient_id = ${id} FOR UPDATE`;
        if (!row) return null;
        const next = apply(recipientFromRow(row).preferences);
        const [updated] = await tx<RecipientRow[]>`
          UPDATE recipients SET preferences = ${json(next)}, updated_at = ${now}
          WHERE tenant = ${tenant} AND recipient_id = ${id}
          RETURNING ${tx.unsafe(RECIPIENT_COLUMNS)}`;
        return recipientFromRow(updated as RecipientRow);
      });
    },
  };
}

/** The PostgreSQL implementation of the category port. */
export function createPostgresCategories(sql: Sql): CategoryStore {
  return {
    async put(tenant, name, fields, now) {
      const [row] = await sql<Array<CategoryRow & { created: boolean }>>`
        INSERT INTO categories (tenant, name, description, required, default_channels, created_at, updated_at)
        VALUES (${tenant}, ${name}, ${fields.description}, ${fields.required}, ${json(fields.defaultChannels)}, ${now}, ${now})
        ON CONFLICT (tenant, name) DO UPDATE SET description = excluded.description,
          required = excluded.required, default_channels = excluded.default_channels, updated_at = excluded.updated_at
        RETURNING ${sql.unsafe(CATEGORY_COLUMNS)}, (xmax = 0) AS created`;
      const stored = row as CategoryRow & { created: boolean };
      return { record: categoryFromRow(stored), created: stored.created };
    },
    async get(tenant, name) {
      const [row] = await sql<CategoryRow[]>`
        SELECT ${sql.unsafe(CATEGORY_COLUMNS)} FROM categories WHERE tenant = ${tenant} AND name = ${name}`;
      return row ? categoryFromRow(row) : null;
    },
    async among(keys) {
      return categoriesAmongOn(sql, keys);
    },
    async list(tenant, options) {
      const rows = await sql<CategoryRow[]>`
        SELECT ${sql.unsafe(CATEGORY_COLUMNS)} FROM categories
        WHERE tenant = ${tenant} AND name > ${options.after ?? ''}
        ORDER BY name LIMIT ${options.limit}`;
      return rows.map(categoryFromRow);
    },
    async remove(tenant, name) {
      const rows = await sql`DELETE FROM categories WHERE tenant = ${tenant} AND name = ${name}`;
      return rows.count > 0;
    },
  };
}
