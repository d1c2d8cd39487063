import { randomUUID } from 'node:crypto';
import { everyPriority } from '../../src/store/port/queue.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { joinRank } from '../../src/store/sqlite/lanes.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { measured, type Row } from '../lib/report.ts';
import { median } from '../lib/stats.ts';
import { tempDir } from '../lib/tmp.ts';
import type { Scenario } from './types.ts';

type SqliteStore = ReturnType<typeof createSqliteStore>;

const CHANNELS = ['email', 'sms', 'push'];

/**
 * A temporary SQLite store, disk sync off, with `count` rows inserted directly by `sql` (queue
 * contract format), 10,000 a transaction, `row(i, now)` giving each one's parameters; and the
 * statement, for more. Checkpoint before timing anything on it.
 */
function fillStore(name: string, count: number, sql: string, row: (i: number, now: number) => object) {
  const store = createSqliteStore(tempDir(name));
  store.db.pragma('synchronous = OFF');
  const insert = store.db.prepare(sql);
  let done = 0;
  const chunk = store.db.transaction(() => {
    const now = Date.now();
    for (let i = 0; i < 10_000 && done < count; i++, done++) insert.run(row(done, now));
  });
  while (done < count) {
    chunk();
    if (done % 200_000 === 0)
      progress(`claim: ${done.toLocaleString('en-US')} of ${count.toLocaleString('en-US')} inserted`);
  }
  return { store, insert };
}

/** Tenants whose only waiting rows are scheduled for tomorrow, beside the late row's wait. */
const SCHEDULED_TENANTS = 10_000;

/** No checkpoint left over from the inserts lands inside a timed claim. */
const checkpoint = (store: SqliteStore) => store.db.pragma('wal_checkpoint(TRUNCATE)');

/**
 * A temporary SQLite store with `count` NORMAL rows ready, spread round-robin over `tenants`
 * tenants and the three channels, ranked by the store's own tenant-line rule, as ingest ranks them.
 */
function filledStore(count: number, tenants: number): SqliteStore {
  const { store } = fillStore(
    'claim',
    count,
    `INSERT INTO notifications (id, tenant, channel, priority, status, queue_state, recipient, content,
       variables, metadata, attempts, created_at, updated_at, lane_rank)
     VALUES (@id, @tenant, @channel, 2, 'QUEUED', 'ready', '{"email":"ada@example.com"}',
       '{"subject":"Hi","text":"Your code is 482913."}', '{}', '{}', 0, @now, @now,
       ${joinRank('@tenant', '2', '@channel')})`,
    (i, now) => ({ id: randomUUID(), tenant: `t${i % tenants}`, channel: CHANNELS[i % 3], now }),
  );
  checkpoint(store);
  return store;
}

/** One scheduler step at `now`, claiming up to `claimBatch` in all and `perPriority` of each priority. */
function step(store: SqliteStore, now: number, claimBatch: number, perPriority: number[]) {
  return store.queue.cycle({
    owner: 'bench',
    now,
    leaseUntil: now + 60_000,
    completions: [],
    claim: {
      perPriority,
      sharedLimit: claimBatch,
      perChannel: everyPriority({ email: claimBatch, sms: claimBatch, push: claimBatch }),
    },
    maxAttempts: 8,
  });
}

/**
 * How long a row of another tenant that falls due (a retry, or a scheduled one) waits for its
 * claim when `count` LOW rows of tenant `newsletter` fell due just before it (a newsletter
 * scheduled for the same minute): a CRITICAL (promoted before LOW), or a LOW (tenants take turns
 * within a priority). `scheduled` other tenants, between the two in tenant order, each have a
 * LOW scheduled for tomorrow (the walk of tenants passes over them). Steps are run back to back,
 * as the worker runs them while it promotes, until one claims it.
 */
async function dueBehindBacklog(
  count: number,
  claimBatch: number,
  priority: 0 | 3,
  scheduled = 0,
): Promise<{ ms: number; steps: number }> {
  // Each LOW row falls due 2 s before its chunk was inserted, the late row 1 s before it is.
  const { store, insert } = fillStore(
    'claim-due',
    count,
    `INSERT INTO notifications (id, tenant, channel, priority, status, queue_state, due_at, recipient, content,
       variables, metadata, attempts, created_at, updated_at)
     VALUES (@id, @tenant, 'email', @priority, 'QUEUED', 'waiting', @dueAt, '{"email":"ada@example.com"}',
       '{"subject":"Hi","text":"Your code is 482913."}', '{}', '{}', 0, @now, @now)`,
    (_, now) => ({ id: randomUUID(), tenant: 'newsletter', priority: 3, dueAt: now - 2000, now }),
  );
  try {
    const now = Date.now();
    const late = randomUUID();
    insert.run({ id: late, tenant: 'shop', priority, dueAt: now - 1000, now });
    store.db.transaction(() => {
      for (let i = 0; i < scheduled; i++)
        insert.run({ id: randomUUID(), tenant: `reminders-${i}`, priority: 3, dueAt: now + 86_400_000, now });
    })();
    checkpoint(store);
    // Behind a CRITICAL, LOW may take nothing (its provider is busy): what is measured is the
    // wait for promotion. A LOW is claimed with the newsletter's, in turns.
    const perPriority = [claimBatch, claimBatch, claimBatch, priority === 3 ? claimBatch : 0];
    const started = performance.now();
    for (let steps = 1; ; steps++) {
      const result = await step(store, now, claimBatch, perPriority);
      if (result.claimed.some((n) => n.id === late)) return { ms: performance.now() - started, steps };
      if (result.promoted === 0 && result.claimed.length === 0)
        throw new Error('the late row was never claimed');
    }
  } finally {
    await store.close();
  }
}

/** The tenant counts the claim is timed with: one tenant, and many (round-robin across them). */
const TENANTS = [1, 1000];

/**
 * Scenario 5: time one claim (one scheduler cycle claiming a batch) with 10k, 100k and 1M rows
 * ready, from one tenant and from 1,000 tenants, and the wait of a CRITICAL, and of another
 * tenant's LOW, falling due just after 1M LOW did (dueBehindBacklog), in-process through the scheduler's queue port
 * (store.queue.cycle) against temporary SQLite databases filled by direct inserts. Claims
 * alternate between the databases (10k, 100k, 1M, 10k, ...) so machine noise hits each size
 * alike. Disk sync is off: every claim commits once whatever the backlog, so an fsync would only
 * add the same constant to each and hide the claim's own growth.
 */
async function run(options: BenchOptions): Promise<Row[]> {
  const { sizes, claimsPerSize, claimBatch } = options.sizes.claim;
  const stores: SqliteStore[] = [];
  try {
    // Enough rows that at least `size` are still ready at the last timed claim.
    for (const tenants of TENANTS) {
      for (const size of sizes) stores.push(filledStore(size + (claimsPerSize + 3) * claimBatch, tenants));
    }
    const claimOnce = async (store: SqliteStore) => {
      const now = Date.now();
      const started = performance.now();
      const result = await step(store, now, claimBatch, [claimBatch, claimBatch, claimBatch, claimBatch]);
      const ms = performance.now() - started;
      if (result.claimed.length !== claimBatch) {
        throw new Error(`a claim took ${result.claimed.length} rows, expected ${claimBatch}`);
      }
      return ms;
    };
    for (let i = 0; i < 3; i++) for (const store of stores) await claimOnce(store); // warm-up
    const times: number[][] = stores.map(() => []);
    for (let i = 0; i < claimsPerSize; i++) {
      for (const [k, store] of stores.entries()) times[k]?.push(await claimOnce(store));
    }
    const medians = times.map((t) => median(t));
    progress(`claim: medians ${medians.map((m) => `${m.toFixed(3)} ms`).join(', ')}`);
    const rows: Row[] = [];
    for (const [t, tenants] of TENANTS.entries()) {
      const of = (i: number) => medians[t * sizes.length + i] as number;
      const from = tenants === 1 ? 'one tenant' : `${tenants.toLocaleString('en-US')} tenants`;
      for (const [i, size] of sizes.entries()) {
        rows.push(
          measured(
            'claim',
            `one claim of ${claimBatch} with ${size.toLocaleString('en-US')} ready, ${from}`,
            of(i),
            'ms',
            {
              note:
                i === 0 && t === 0
                  ? `median of ${claimsPerSize} claims each, alternating between the sizes; disk sync off`
                  : undefined,
            },
          ),
        );
      }
      const last = sizes.length - 1;
      rows.push(
        measured(
          'claim',
          `ratio ${sizes[last]?.toLocaleString('en-US')} / ${sizes[0]?.toLocaleString('en-US')} ready, ${from}`,
          of(last) / of(0),
          'x',
          { target: { bound: 2, better: 'lower', text: '<= 2' } },
        ),
      );
    }
    const backlog = sizes[sizes.length - 1] as number;
    for (const [priority, late, scheduled] of [
      [0, 'a CRITICAL', 0],
      [3, "another tenant's LOW", 0],
      [3, "another tenant's LOW", SCHEDULED_TENANTS],
    ] as const) {
      const due = await dueBehindBacklog(backlog, claimBatch, priority, scheduled);
      const beside = scheduled
        ? `, ${scheduled.toLocaleString('en-US')} other tenants' LOW scheduled for tomorrow`
        : '';
      progress(
        `claim: ${late} falling due after ${backlog} LOW${beside}: ${due.ms.toFixed(1)} ms, ${due.steps} steps`,
      );
      rows.push(
        measured(
          'claim',
          `${late} falling due just after ${backlog.toLocaleString('en-US')} LOW${beside}: until claimed`,
          due.ms,
          'ms',
          {
            target: { bound: 100, better: 'lower', text: '<= 100 ms' },
            note: `${due.steps} step${due.steps === 1 ? '' : 's'} back to back (each promotes at most 1,000 due rows); disk sync off`,
          },
        ),
      );
    }
    return rows;
  } finally {
    for (const store of stores) await store.close();
  }
}

export const claimScenario: Scenario = {
  name: 'claim',
  title: '5. Claim cost with 10k, 100k and 1M ready, from one tenant and from 1,000',
  run,
};
