import { join } from 'node:path';
import Database from 'better-sqlite3';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { measured, type Row } from '../lib/report.ts';
import { type DataAt, dispatchOn } from './dispatch.ts';
import type { Scenario } from './types.ts';

/** Suppressed addresses of the bench's tenant, none of them a recipient of the drained backlog. */
const SUPPRESSED = 100_000;

/** Fills the suppressions table of a stopped SQLite deployment, in one transaction. */
async function suppress(at: DataAt, count: number): Promise<void> {
  if (at.databaseUrl !== undefined) throw new Error('the suppressions scenario runs on SQLite');
  const db = new Database(join(at.dataDir, 'herald.db'));
  try {
    const insert = db.prepare(
      "INSERT INTO suppressions (tenant, channel, recipient, reason, created_at) VALUES ('default', 'email', ?, 'bounce', ?)",
    );
    const now = Date.now();
    db.transaction(() => {
      for (let i = 0; i < count; i++) insert.run(`bounced-${i}@example.com`, now);
    })();
  } finally {
    db.close();
  }
  progress(`suppressions: ${count.toLocaleString('en-US')} suppressed addresses stored`);
}

/**
 * Scenario 16: what checking suppressions costs dispatch. The same NORMAL backlog drains twice
 * on `npm start`'s layout: with an empty suppressions table, and with 100,000 suppressed
 * addresses of the same tenant and channel. Every claim looks its rows up in one statement
 * either way; none of the backlog's recipients is suppressed, so both drains deliver everything.
 */
export const suppressionsScenario: Scenario = {
  name: 'suppressions',
  title: '16. Suppressions: their cost to dispatch',
  async run(options: BenchOptions): Promise<Row[]> {
    const { count } = options.sizes.dispatch;
    const suppressed = options.quick ? 1000 : SUPPRESSED;
    const [without] = await dispatchOn('sqlite', options, {
      name: 'suppressions',
      run: async () => progress('suppressions: none stored'),
    });
    const [withList] = await dispatchOn('sqlite', options, {
      name: 'suppressions',
      run: (at) => suppress(at, suppressed),
    });
    if (!without?.value || !withList?.value) return [without, withList].filter((r): r is Row => !!r);
    const n = count.toLocaleString('en-US');
    return [
      { ...without, metric: `deliveries/s with no suppression stored (${n} NORMAL)` },
      {
        ...withList,
        metric: `deliveries/s with ${suppressed.toLocaleString('en-US')} suppressions stored (${n} NORMAL)`,
      },
      measured('suppressions', 'dispatch with suppressions vs without', withList.value / without.value, '×', {
        note: 'one look-up statement per claim either way; one run, noisy: compare with the dispatch scenario',
      }),
    ];
  },
};
