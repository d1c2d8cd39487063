import type { PendingQuery, Row } from 'postgres';
import { LIST_SCAN } from '../port/scanned-page.ts';
import type { Sql } from './connect.ts';

/**
 * Where a filtered list read stops (ScannedPage): the key of the LIST_SCAN-th newest row of
 * `table` matching `where` (newest first by `key`), undefined when there are fewer.
 */
export async function scanFloor(
  sql: Sql,
  table: string,
  key: string,
  where: PendingQuery<Row[]>,
): Promise<number | undefined> {
  const [row] = await sql<{ key: number }[]>`
    SELECT ${sql(key)} AS key FROM ${sql(table)} WHERE ${where}
     ORDER BY ${sql(key)} DESC LIMIT 1 OFFSET ${LIST_SCAN - 1}`;
  return row?.key;
}
