import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HISTORY_WINDOWS } from '../../src/notifications/outcomes.ts';
import type { Store } from '../../src/store/port/index.ts';
import { deliverAt, history } from './outcome-counts.suite.ts';
import { T0 } from './queue-fixtures.ts';

/**
 * Two stores on one database (two processes): each one's completions land in the same history,
 * including cycles that commit at the same time.
 */
export function sharedOutcomeCountsSuite(name: string, openPair: () => Promise<[Store, Store]>): void {
  describe(`delivery history counters shared by two stores (${name})`, () => {
    it('sums what every store counted, concurrent cycles included', async () => {
      const [a, b] = await openPair();
      try {
        await deliverAt(a, T0 + 1000, 'wa');
        await deliverAt(b, T0 + 2000, 'wb');
        await Promise.all([
          ...Array.from({ length: 5 }, (_, i) => deliverAt(a, T0 + 3000 + i, 'wa')),
          ...Array.from({ length: 5 }, (_, i) => deliverAt(b, T0 + 3000 + i, 'wb')),
        ]);
        for (const store of [a, b]) {
          assert.deepEqual(await history(store, HISTORY_WINDOWS['1h'].spanMs, 't1'), [
            [0, 'email', 'DELIVERED', 12],
          ]);
          assert.deepEqual(await history(store, HISTORY_WINDOWS['7d'].spanMs), [
            [0, 'email', 'DELIVERED', 12],
          ]);
        }
      } finally {
        await a.close();
        await b.close();
      }
    });
  });
}
