import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Store } from '../../src/store/port/index.ts';

/** Each process's published metrics: one row per process, replaced, read by age, removed. */
export function processMetricsSuite(name: string, open: () => Promise<Store>): void {
  describe(`process metrics store (${name})`, () => {
    let store: Store;
    after(() => store?.close());

    it('keeps one row per process, lists the recent ones and drops a stopped or stale process', async () => {
      store = await open();
      const row = (processId: string, updatedAt: number, snapshot = '[]') => ({
        processId,
        roles: 'worker',
        updatedAt,
        snapshot,
      });
      await store.processMetrics.publish(row('a', 1000));
      await store.processMetrics.publish(row('b', 2000));
      await store.processMetrics.publish(row('a', 3000, '[1]'));
      assert.deepEqual(await store.processMetrics.since(1500), [row('a', 3000, '[1]'), row('b', 2000)]);
      assert.deepEqual(await store.processMetrics.since(2500), [row('a', 3000, '[1]')]);
      await store.processMetrics.publish(row('c', 4000));
      // `a` stops; `b` (older than 2500) is a process that died without saying so.
      await store.processMetrics.remove('a', 2500);
      assert.deepEqual(await store.processMetrics.since(0), [row('c', 4000)]);
    });
  });
}
