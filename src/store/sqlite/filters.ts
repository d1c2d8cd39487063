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
