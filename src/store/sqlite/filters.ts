import type Database from 'better-sqlite3';
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

/**
 * Finds where a filtered list read stops (ScannedPage): the key of the LIST_SCAN-th newest row of
 * `table` within `bounds` (newest first by `key`), undefined when there are fewer. Read from the
 * index alone; its statements are prepared once per shape.
 */
export function createScanFloor(db: SqliteDb) {
  const statements = new Map<string, Database.Statement>();
  return (
    table: string,
    key: string,
    bounds: ReadonlyArray<readonly [string, unknown]>,
  ): number | undefined => {
    const { where, params } = whereOf(bounds);
    const sql = `SELECT ${key} FROM ${table} ${where} ORDER BY ${key} DESC LIMIT 1 OFFSET ${LIST_SCAN - 1}`;
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql).pluck();
      statements.set(sql, statement);
    }
    return statement.get(...params) as number | undefined;
  };
}
