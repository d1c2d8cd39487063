import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/port/index.ts';
import { freshStores } from './suites.ts';

const T0 = Date.UTC(2026, 0, 1);
const smtp = (want: number) => ({ key: 'email:smtp', want, ratePerSecond: 10, burst: 5 });

/** Behaviour of `store.limits` (shared provider buckets and circuits) that every adapter must show. */
export function limitsSuite(name: string, open: () => Promise<Store>): void {
  describe(`shared provider limits (${name})`, () => {
    const fresh = freshStores(open);

    it('starts a bucket full and never grants more than its burst', async () => {
      const store = await fresh();
      assert.deepEqual(await store.limits.takeTokens([smtp(3)], T0), [3]);
      assert.deepEqual(await store.limits.takeTokens([smtp(3)], T0), [2]);
      assert.deepEqual(await store.limits.takeTokens([smtp(3)], T0), [0]);
    });

    it('refills at its rate up to the burst, and keeps fractions for later', async () => {
      const store = await fresh();
      await store.limits.takeTokens([smtp(5)], T0);
      assert.deepEqual(await store.limits.takeTokens([smtp(5)], T0 + 150), [1]);
      assert.deepEqual(await store.limits.takeTokens([smtp(5)], T0 + 200), [1]);
      assert.deepEqual(await store.limits.takeTokens([smtp(9)], T0 + 60_000), [5]);
    });

    it('answers several buckets in request order', async () => {
      const store = await fresh();
      const sms = { key: 'sms:twilio', want: 1, ratePerSecond: 1, burst: 1 };
      assert.deepEqual(await store.limits.takeTokens([sms, smtp(2)], T0), [1, 2]);
      assert.deepEqual(await store.limits.takeTokens([smtp(1), sms], T0), [1, 0]);
    });

    it('never hands out the same tokens twice to concurrent takers', async () => {
      const store = await fresh();
      const grants = await Promise.all(
        Array.from({ length: 8 }, () => store.limits.takeTokens([{ ...smtp(2), burst: 10 }], T0)),
      );
      assert.equal(
        grants.reduce((sum, [n]) => sum + (n ?? 0), 0),
        10,
      );
    });

    it('publishes open circuits until they close or their time passes', async () => {
      const store = await fresh();
      await store.limits.setCircuit('sms:twilio', T0 + 5000, T0);
      await store.limits.setCircuit('email:smtp', T0 + 1000, T0);
      assert.deepEqual(await store.limits.openCircuits(T0 + 10), [
        { key: 'email:smtp', openUntil: T0 + 1000 },
        { key: 'sms:twilio', openUntil: T0 + 5000 },
      ]);
      assert.deepEqual(await store.limits.openCircuits(T0 + 2000), [
        { key: 'sms:twilio', openUntil: T0 + 5000 },
      ]);
      await store.limits.setCircuit('sms:twilio', null, T0 + 3000);
      assert.deepEqual(await store.limits.openCircuits(T0 + 3000), []);
    });
  });
}
