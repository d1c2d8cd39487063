import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/port/index.ts';
import type { Sql } from '../../src/store/postgres/connect.ts';
import { T0 } from './queue-fixtures.ts';
import { broadcast, newsSubscribers } from './topics.suite.ts';

type PgStore = Store & { sql: Sql };

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * What one PostgreSQL fan-out step writes and how it commits (docs/topics.md, decision record
 * 0058). `open` answers a store whose database commits synchronously unless told otherwise
 * (`synchronous_commit = on` for the database, whatever the test server's own setting).
 */
export function fanOutStepSuite(open: () => Promise<PgStore>): void {
  describe("a PostgreSQL fan-out step's rows and commits", () => {
    it("numbers a range's IDs in the order it inserts them, each a UUIDv7 of its own", async () => {
      const store = await open();
      const ids = await newsSubscribers(store, 2500);
      const bc = broadcast();
      await store.broadcasts.create(bc);
      while (await store.broadcasts.step(T0 + 100, 2000));
      const rows = await store.sql<{ id: string; recipient: string }[]>`
        SELECT id, recipient FROM notifications WHERE broadcast_id = ${bc.id} ORDER BY seq`;
      assert.equal(rows.length, 2500);
      assert.deepEqual(
        rows.map((r) => JSON.parse(r.recipient).id),
        ids,
        'made in recipient order, each once',
      );
      for (const r of rows) assert.match(r.id, UUID_V7);
      assert.equal(new Set(rows.map((r) => r.id)).size, 2500, 'no ID twice');
      // Both ranges (2,000 then 500) were made at one millisecond: each rises from its first row.
      const first = rows.slice(0, 2000).map((r) => r.id);
      assert.deepEqual(first, [...first].sort(), "the first range's IDs rise in insertion order");
      const second = rows.slice(2000).map((r) => r.id);
      assert.deepEqual(second, [...second].sort(), "the second range's IDs rise in insertion order");
    });

    it('leases and makes ranges without waiting for the WAL flush, and leaves the connection as it was', async () => {
      const store = await open();
      const [before] = await store.sql<{ s: string }[]>`SELECT current_setting('synchronous_commit') AS s`;
      assert.equal(before?.s, 'on', "the database's own setting");
      // Each write of a step records the setting its transaction ran with.
      await store.sql.unsafe(`
        CREATE TABLE commit_modes (what text, mode text);
        CREATE FUNCTION commit_mode() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN INSERT INTO commit_modes VALUES (TG_TABLE_NAME, current_setting('synchronous_commit')); RETURN NULL; END $$;
        CREATE TRIGGER commit_mode AFTER INSERT ON notifications FOR EACH STATEMENT EXECUTE FUNCTION commit_mode();
        CREATE TRIGGER commit_mode AFTER INSERT ON broadcast_ranges FOR EACH STATEMENT EXECUTE FUNCTION commit_mode();`);
      await newsSubscribers(store, 300);
      await store.broadcasts.create(broadcast());
      while (await store.broadcasts.step(T0 + 100, 100));
      const steps = await store.sql<{ what: string; mode: string }[]>`
        SELECT what, mode, count(*)::int AS n FROM commit_modes GROUP BY what, mode ORDER BY what`;
      assert.deepEqual(
        steps.map((r) => ({ ...r })),
        [
          { what: 'broadcast_ranges', mode: 'off', n: 3 },
          { what: 'notifications', mode: 'off', n: 3 },
        ],
      );
      const after = await Promise.all(
        [1, 2, 3, 4].map(() => store.sql<{ s: string }[]>`SELECT current_setting('synchronous_commit') AS s`),
      );
      assert.deepEqual(
        after.map(([r]) => r?.s),
        ['on', 'on', 'on', 'on'],
        'SET LOCAL: the pool keeps its setting',
      );
    });
  });
}
