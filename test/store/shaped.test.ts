import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { shaped } from '../../src/store/sqlite/shaped.ts';

describe('shaped (SQLite rows read as arrays, built as objects)', () => {
  const db = new Database(':memory:');
  db.exec(`CREATE TABLE t (a INTEGER PRIMARY KEY, "b c" TEXT, "x""y" TEXT, d REAL)`);
  db.exec(`INSERT INTO t VALUES (1, 'one', 'q"1', 1.5), (2, NULL, 'q2', NULL)`);

  it('gives the rows better-sqlite3 gives, for SELECT and RETURNING, with any column names', () => {
    for (const sql of [
      'SELECT * FROM t ORDER BY a',
      'SELECT a, a AS a, "b c", d AS "constructor", "x""y" AS toString FROM t ORDER BY a',
      `UPDATE t SET d = d WHERE a > 0 RETURNING *`,
    ]) {
      const plain = db.prepare(sql).all();
      const fast = shaped(db.prepare(sql)).all();
      assert.deepEqual(fast, plain, sql);
      assert.deepEqual(
        fast.map((row) => Object.keys(row as object)),
        plain.map((row) => Object.keys(row as object)),
      );
    }
  });

  it('refuses a column named __proto__ (an object literal would set the prototype)', () => {
    assert.throws(() => shaped(db.prepare('SELECT a AS "__proto__" FROM t')), /__proto__/);
  });

  it('takes parameters as the statement does, and get gives undefined for no row', () => {
    const byA = shaped<{ a: number }>(db.prepare('SELECT a FROM t WHERE a = @a'));
    assert.deepEqual(byA.get({ a: 2 }), { a: 2 });
    assert.equal(byA.get({ a: 3 }), undefined);
    const positional = shaped<{ a: number }>(db.prepare('SELECT a FROM t WHERE a >= ? AND a <= ?'));
    assert.deepEqual(positional.all(1, 2), [{ a: 1 }, { a: 2 }]);
    assert.deepEqual(positional.all([2, 2]), [{ a: 2 }]);
  });
});
