import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/port/index.ts';
import type { EncodedNotification } from '../../src/store/port/notifications.ts';
import { type ClaimBudget, type CycleInput, everyPriority } from '../../src/store/port/queue.ts';
import { newNotification, T0 } from './queue-fixtures.ts';
import { freshStores } from './suites.ts';

/** Tenant fairness (docs/dispatch.md, "Tenant lines") on any adapter. */
export function lanesSuite(name: string, open: () => Promise<Store>): void {
  describe(`tenant lines (${name})`, () => {
    const fresh = freshStores(open);

    /** A fresh store, and helpers that name each claimed notification by tenant and number. */
    const setup = async () => {
      const store = await fresh();
      const names = new Map<string, string>();
      const counts = new Map<string, number>();
      const low = (tenant: string, over: Partial<EncodedNotification> = {}) => {
        const n = newNotification({ tenant, priority: 'LOW', ...over });
        const number = (counts.get(tenant) ?? 0) + 1;
        counts.set(tenant, number);
        names.set(n.id, `${tenant}${number}`);
        return n;
      };
      const insert = (...items: EncodedNotification[]) => store.notifications.insertMany(items, 0);
      /** One scheduler cycle claiming up to `limit` of each priority. */
      const cycle = (limit: number, over: Partial<CycleInput> = {}) => {
        const budget: ClaimBudget = {
          perPriority: [limit, limit, limit, limit],
          sharedLimit: limit,
          perChannel: everyPriority({ email: limit, sms: limit, push: limit }),
        };
        return store.queue.cycle({
          owner: 'w1',
          now: T0 + 1000,
          leaseUntil: T0 + 31_000,
          completions: [],
          maxAttempts: 3,
          claim: budget,
          ...over,
        });
      };
      /** The names of what one cycle claimed, in claim order. */
      const claim = async (limit: number, over: Partial<CycleInput> = {}) =>
        (await cycle(limit, over)).claimed.map((n) => names.get(n.id));
      return { low, insert, cycle, claim };
    };

    it("interleaves two tenants' LOW backlogs, FIFO within each", async () => {
      const { low, insert, claim } = await setup();
      await insert(...Array.from({ length: 6 }, () => low('a')));
      await insert(...Array.from({ length: 3 }, () => low('b')));
      assert.deepEqual(await claim(9), ['a1', 'b1', 'a2', 'b2', 'a3', 'b3', 'a4', 'a5', 'a6']);
    });

    it('gives a tenant that was idle no credit: it joins at the head, not ahead of it', async () => {
      const { low, insert, claim } = await setup();
      await insert(...Array.from({ length: 5 }, () => low('a')));
      assert.deepEqual(await claim(3), ['a1', 'a2', 'a3']);
      await insert(low('b'), low('b'), low('b'));
      assert.deepEqual(await claim(5), ['a4', 'b1', 'a5', 'b2', 'b3']);
    });

    it('ranks one mixed batch line by line, in batch order', async () => {
      const { low, insert, claim } = await setup();
      await insert(low('a'), low('a'), low('b'), low('a'), low('c'), low('b'));
      assert.deepEqual(await claim(6), ['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
    });

    it('keeps lines per channel and strict priority between priorities', async () => {
      const { low, insert, claim } = await setup();
      await insert(low('a'), low('a'), low('a', { channel: 'sms' }), low('b'));
      await insert(low('c', { priority: 'CRITICAL' }));
      assert.deepEqual(await claim(5), ['c1', 'a1', 'a3', 'b1', 'a2']);
    });

    it('lets a scheduled batch join the lines when due instead of jumping them', async () => {
      const { low, insert, claim } = await setup();
      await insert(...Array.from({ length: 3 }, () => low('a', { scheduledAt: T0 + 500 })));
      await insert(...Array.from({ length: 3 }, () => low('b')));
      assert.deepEqual(await claim(6), ['a1', 'b1', 'a2', 'b2', 'a3', 'b3']);
    });

    it('puts a hold back at the front of the line', async () => {
      const { low, insert, cycle, claim } = await setup();
      await insert(low('a'), low('a'), low('a'), low('b'), low('b'));
      const [first] = (await cycle(1)).claimed;
      assert.ok(first);
      const held = await claim(5, {
        completions: [
          {
            seq: first.seq,
            attempt: 1,
            kind: 'hold',
            detail: 'rate limited',
            until: T0 + 1000,
            repeat: false,
          },
        ],
      });
      assert.deepEqual(held, ['a1', 'b1', 'a2', 'b2', 'a3']);
    });

    it('claims round-robin across 100 tenants whatever order they arrived in', async () => {
      const { low, insert, claim } = await setup();
      for (let t = 0; t < 100; t++) await insert(low(`t${t}-`), low(`t${t}-`));
      const first = await claim(100);
      assert.equal(new Set(first.map((n) => n?.split('-')[0])).size, 100);
      assert.ok(first.every((n) => n?.endsWith('-1')));
    });
  });
}
