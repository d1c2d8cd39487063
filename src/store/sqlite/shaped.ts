import type { Statement } from 'better-sqlite3';

/** A statement that returns rows, read through `shaped`. */
export interface ShapedStatement<Row> {
  get(...params: unknown[]): Row | undefined;
  all(...params: unknown[]): Row[];
}

/**
 * Reads a statement's rows as better-sqlite3's row objects, only cheaper: better-sqlite3 sets a
 * row object's properties one by one, which costs several µs a row for a wide row on the hot
 * paths (the claim, the status log). This reads the row as an array and builds the object with
 * a function made once per statement from its column names, so every row has one fixed shape.
 * Measured on the bench machine, 100,000 rows of the 22 columns a notification is read with,
 * seven runs each: 7.18 µs a row as objects (median; 5.93 to 11.74), 2.87 µs this way (2.47 to
 * 3.57). The objects are the same: the columns' names in order, a repeated name keeping its last
 * value.
 */
export function shaped<Row>(statement: Statement): ShapedStatement<Row> {
  const names = statement.columns().map((column) => column.name);
  // In an object literal that name would set the prototype; no Herald query selects it.
  if (names.includes('__proto__')) throw new TypeError('shaped: a column named __proto__');
  statement.raw(true);
  // The names are the statement's own result columns (Herald's SQL), quoted as JSON strings.
  const build = new Function(
    'row',
    `return { ${names.map((name, i) => `${JSON.stringify(name)}: row[${i}]`).join(', ')} };`,
  ) as (row: unknown[]) => Row;
  return {
    get(...params) {
      const row = statement.get(...params) as unknown[] | undefined;
      return row === undefined ? undefined : build(row);
    },
    all(...params) {
      const rows = statement.all(...params) as unknown[][];
      const out = new Array<Row>(rows.length);
      for (let i = 0; i < rows.length; i++) out[i] = build(rows[i] as unknown[]);
      return out;
    },
  };
}
