import { randomUUID } from 'node:crypto';
import { Unavailable } from '../lib/api.ts';
import { progress } from '../lib/log.ts';
import type { BenchOptions } from '../lib/options.ts';
import { measured, type Row } from '../lib/report.ts';
import { median } from '../lib/stats.ts';
import { tempDir } from '../lib/tmp.ts';
import type { Scenario } from './types.ts';

/** The part of the scheduler's queue port this scenario calls (src/store/port/queue.ts). */
interface ClaimingQueue {
  cycle(input: {
    owner: string;
    now: number;
    leaseUntil: number;
    completions: readonly never[];
    claim: { perPriority: readonly number[]; sharedLimit: number; perChannel: Record<string, number> };
    maxAttempts: number;
  }): Promise<{ claimed: unknown[] }>;
}

interface SqliteHandle {
  db: {
    prepare(sql: string): { run(...args: unknown[]): unknown };
    transaction<T>(fn: () => T): () => T;
    pragma(s: string): unknown;
  };
  queue?: ClaimingQueue;
  close(): Promise<void>;
}

/**
 * Scenario 5: time one claim (one scheduler cycle claiming a batch) with 10k, 100k and 1M rows
 * ready, in-process against a temporary SQLite database filled by direct inserts in the queue
 * contract's row format. Disk sync is off while measuring: every claim commits once whatever
 * the backlog, so an fsync would only add the same constant to each and hide the claim's own
 * growth; the figure is the claim's work (index seeks and updates).
 */
async function run(options: BenchOptions): Promise<Row[]> {
  const { sizes, claimsPerSize, claimBatch } = options.sizes.claim;
  const { createSqliteStore } = await import('../../src/store/sqlite/index.ts');
  const store = createSqliteStore(tempDir('claim')) as unknown as SqliteHandle;
  try {
    const queue = store.queue;
    if (!queue?.cycle)
      throw new Unavailable('the scheduler queue store (store.queue.cycle) has not landed yet');
    store.db.pragma('synchronous = OFF');
    const insert = store.db.prepare(
      `INSERT INTO notifications (id, tenant, channel, priority, status, queue_state, recipient, content,
         variables, metadata, attempts, created_at, updated_at)
       VALUES (?, 'default', ?, 2, 'QUEUED', 'ready', '{"email":"ada@example.com"}',
         '{"subject":"Hi","text":"Your code is 482913."}', '{}', '{}', 0, ?, ?)`,
    );
    const channels = ['email', 'sms', 'push'];
    let ready = 0;
    const fillTo = (target: number) => {
      const now = Date.now();
      const chunk = store.db.transaction(() => {
        for (let i = 0; i < 10_000 && ready < target; i++, ready++)
          insert.run(randomUUID(), channels[ready % 3], now, now);
      });
      while (ready < target) {
        chunk();
        if (ready % 100_000 === 0) progress(`claim: ${ready.toLocaleString('en-US')} ready rows inserted`);
      }
    };
    const claimOnce = async () => {
      const now = Date.now();
      const started = performance.now();
      const result = await queue.cycle({
        owner: 'bench',
        now,
        leaseUntil: now + 60_000,
        completions: [],
        claim: {
          perPriority: [claimBatch, claimBatch, claimBatch, claimBatch],
          sharedLimit: claimBatch,
          perChannel: { email: claimBatch, sms: claimBatch, push: claimBatch },
        },
        maxAttempts: 8,
      });
      const ms = performance.now() - started;
      if (result.claimed.length !== claimBatch)
        throw new Error(`a claim took ${result.claimed.length} rows, expected ${claimBatch}`);
      ready -= claimBatch;
      return ms;
    };
    const medians: number[] = [];
    for (const size of sizes) {
      // Enough rows that at least `size` are still ready at the last timed claim.
      fillTo(size + (claimsPerSize + 3) * claimBatch);
      for (let i = 0; i < 3; i++) await claimOnce(); // warm the statement cache and pages
      const times: number[] = [];
      for (let i = 0; i < claimsPerSize; i++) times.push(await claimOnce());
      medians.push(median(times));
      progress(
        `claim: ${claimBatch} rows with ${size.toLocaleString('en-US')} ready: median ${median(times).toFixed(3)} ms`,
      );
    }
    const rows = sizes.map((size, i) =>
      measured(
        'claim',
        `one claim of ${claimBatch} with ${size.toLocaleString('en-US')} ready`,
        medians[i] as number,
        'ms',
        {
          note:
            i === 0
              ? `median of ${claimsPerSize} claims each; disk sync off (see the scenario's comment)`
              : undefined,
        },
      ),
    );
    const last = sizes.length - 1;
    rows.push(
      measured(
        'claim',
        `ratio ${sizes[last]?.toLocaleString('en-US')} / ${sizes[0]?.toLocaleString('en-US')} ready`,
        (medians[last] as number) / (medians[0] as number),
        'x',
        {
          target: { bound: 2, better: 'lower', text: '<= 2' },
        },
      ),
    );
    return rows;
  } finally {
    await store.close();
  }
}

export const claimScenario: Scenario = {
  name: 'claim',
  title: '5. Claim cost with 10k, 100k and 1M ready',
  run,
};
