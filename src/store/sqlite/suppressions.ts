import type { Suppression, SuppressionRecord } from '../../suppressions/model.ts';
import { scannedPage } from '../port/scanned-page.ts';
import type { SuppressionKey, SuppressionStore } from '../port/suppressions.ts';
import {
  SUPPRESSION_COLUMNS as COLUMNS,
  type SuppressionRow as Row,
  suppressionFromRow,
  WIDENS,
} from '../rows-suppressions.ts';
import { byText, createListWhere } from './filters.ts';
import { preparedOnce, type SqliteDb } from './open.ts';

function prepare(db: SqliteDb) {
  return {
    upsert: db.prepare<[string, string, string, string, number], Row>(
      `INSERT INTO suppressions (tenant, channel, recipient, reason, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (tenant, channel, recipient) DO UPDATE SET reason = excluded.reason, created_at = excluded.created_at
       WHERE ${WIDENS}`,
    ),
    one: db.prepare<[string, string, string], Row>(
      `SELECT ${COLUMNS} FROM suppressions WHERE tenant = ? AND channel = ? AND recipient = ?`,
    ),
    // One statement for a whole claim: the keys as a JSON array, each an index seek.
    match: db.prepare<[string], Row>(
      `SELECT s.id, s.tenant, s.channel, s.recipient, s.reason, s.created_at
       FROM json_each(?) k JOIN suppressions s
         ON s.tenant = k.value ->> 0 AND s.channel = k.value ->> 1 AND s.recipient = k.value ->> 2`,
    ),
    remove: db.prepare<[string, string, string]>(
      'DELETE FROM suppressions WHERE tenant = ? AND channel = ? AND recipient = ?',
    ),
  };
}

const statements = preparedOnce(prepare);

/**
 * Adds suppressions inside the caller's transaction (a completion's or a report's, so the
 * suppression commits with the status change that caused it).
 */
export function addSuppressionsSync(
  db: SqliteDb,
  entries: readonly Suppression[],
  now: number,
): SuppressionRecord[] {
  const s = statements(db);
  return entries.map((e) => {
    s.upsert.run(e.tenant, e.channel, e.recipient, e.reason, now);
    return suppressionFromRow(s.one.get(e.tenant, e.channel, e.recipient) as Row);
  });
}

/** The suppressions among `keys`, inside the caller's transaction (the claim's). */
export function matchSuppressionsSync(db: SqliteDb, keys: readonly SuppressionKey[]): SuppressionRecord[] {
  if (keys.length === 0) return [];
  const list = JSON.stringify(keys.map((k) => [k.tenant, k.channel, k.recipient]));
  return statements(db).match.all(list).map(suppressionFromRow);
}

/** The SQLite implementation of the suppression port. */
export function createSqliteSuppressions(db: SqliteDb): SuppressionStore {
  const s = statements(db);
  const add = db.transaction(addSuppressionsSync);
  const listWhere = createListWhere(db);
  const statement = byText((sql) => db.prepare(sql));
  return {
    async add(entries, now) {
      return add.immediate(db, entries, now);
    },
    async remove(key) {
      return s.remove.run(key.tenant, key.channel, key.recipient).changes > 0;
    },
    async list(tenant, options) {
      // A channel alone filters the tenant's suppressions (with a recipient, its key's index finds them).
      const { floor, where, params } = listWhere(
        'suppressions',
        'id',
        [
          ['tenant = ?', tenant],
          ['id < ?', options.before],
        ],
        [
          ['channel = ?', options.channel],
          ['recipient = ?', options.recipient],
        ],
        options.channel !== undefined && options.recipient === undefined,
      );
      const rows = statement(`SELECT ${COLUMNS} FROM suppressions ${where} ORDER BY id DESC LIMIT ?`).all(
        ...params,
        options.limit,
      ) as Row[];
      return scannedPage(rows.map(suppressionFromRow), options.limit, floor);
    },
    async match(keys) {
      return matchSuppressionsSync(db, keys);
    },
  };
}
