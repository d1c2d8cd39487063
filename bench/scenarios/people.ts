import { join } from 'node:path';
import Database from 'better-sqlite3';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { measured, type Row } from '../lib/report.ts';
import { type DataAt, dispatchOn } from './dispatch.ts';
import type { Scenario } from './types.ts';

/**
 * Turns a stopped SQLite deployment's queued backlog into notifications to people: one recipient
 * per notification (`{ id }`, with the address the backlog had), so that every claim resolves
 * each of its rows (docs/sending-to-people.md).
 */
async function toPeople(at: DataAt): Promise<void> {
  if (at.databaseUrl !== undefined) throw new Error('the people scenario runs on SQLite');
  const db = new Database(join(at.dataDir, 'herald.db'));
  try {
    const now = Date.now();
    db.transaction(() => {
      db.prepare(
        `INSERT INTO recipients (tenant, recipient_id, profile, preferences, created_at, updated_at)
         SELECT tenant, 'p' || seq, json_object('email', recipient ->> 'email'), '{"channels":{},"categories":{}}', ?, ?
         FROM notifications WHERE queue_state = 'ready'`,
      ).run(now, now);
      db.prepare(
        "UPDATE notifications SET recipient = json_object('id', 'p' || seq) WHERE queue_state = 'ready'",
      ).run();
    })();
  } finally {
    db.close();
  }
  progress('people: the backlog now names people');
}

/**
 * Scenario: what resolving people costs dispatch. The same NORMAL backlog drains twice on `npm
 * start`'s layout, to addresses and to `{ id }` recipients (each claim reads its recipients in one
 * statement). Target: to people at 0.9 times the rate to addresses or better.
 */
export const peopleScenario: Scenario = {
  name: 'people',
  title: '#50. Dispatch to { id } recipients vs to addresses',
  async run(options: BenchOptions): Promise<Row[]> {
    const { count } = options.sizes.dispatch;
    const [addresses] = await dispatchOn('sqlite', options, {
      name: 'people',
      run: async () => progress('people: addresses as accepted'),
    });
    const [people] = await dispatchOn('sqlite', options, { name: 'people', run: toPeople });
    if (!addresses?.value || !people?.value) return [addresses, people].filter((r): r is Row => !!r);
    const n = count.toLocaleString('en-US');
    return [
      { ...addresses, metric: `deliveries/s to addresses (${n} NORMAL)` },
      { ...people, metric: `deliveries/s to { id } recipients (${n} NORMAL)` },
      measured(
        'people',
        'dispatch to { id } recipients vs to addresses',
        people.value / addresses.value,
        '×',
        {
          target: { bound: 0.9, better: 'higher', text: '>= 0.9×' },
          note: 'one run each, noisy: alternate runs to compare',
        },
      ),
    ];
  },
};
