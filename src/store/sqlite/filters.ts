import { madeOnce } from '../../made-once.ts';
import { LIST_SCAN } from '../port/scanned-page.ts';
import type { SqliteDb } from './open.ts';

/**
 * The WHERE clause of a list query from optional filters: each `[clause with one ?, value]`
 * counts when its value is set. An empty list gives an empty clause.
 */
export function whereOf(filters: ReadonlyArray<readonly [string, unknown]>): {
  where: string;
  params: unknown[];
} {
  const set = filters.filter(([, value]) => value !== undefined);
  return {
    where: set.length > 0 ? `WHERE ${set.map(([clause]) => clause).join(' AND ')}` : '',
    params: set.map(([, value]) => value),
  };
}

type Clause = readonly [string, unknown];

/** Statements made from their text on first use and kept: one per shape of a list query. */
export const byText = <S>(make: (sql: string) => S): ((sql: string) => S) =>
  madeOnce(new Map<string, S>(), make);

/**
 * The WHERE clause of a list read newest first by `key`: `bounds` (its tenant, its cursor), then
 * `filters`. When `bounded`, the read looks at the LIST_SCAN newest rows within `bounds` at most
 * (ScannedPage): `floor` is the key of the last of them, read from the index alone, undefined when
 * there are fewer.
 */
export function createListWhere(db: SqliteDb) {
  const floorOf = byText((sql) => db.prepare(sql).pluck());
  return (
    table: string,
    key: string,
    bounds: readonly Clause[],
    filters: readonly Clause[],
    bounded: boolean,
  ) => {
    let floor: number | undefined;
    if (bounded) {
      const within = whereOf(bounds);
      floor = floorOf(
        `SELECT ${key} FROM ${table} ${within.where} ORDER BY ${key} DESC LIMIT 1 OFFSET ${LIST_SCAN - 1}`,
      ).get(...within.params) as number | undefined;
    }
    return { floor, ...whereOf([...bounds, [`${key} >= ?`, floor], ...filters]) };
  };
}
