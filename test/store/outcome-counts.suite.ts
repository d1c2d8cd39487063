import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HISTORY_WINDOWS } from '../../src/notifications/outcomes.ts';
import type { Completion } from '../../src/notifications/status.ts';
import type { Store } from '../../src/store/port/index.ts';
import type { OutcomeBucket } from '../../src/store/port/outcome-counts.ts';
import { cycle, newNotification, seedMany, T0 } from './queue-fixtures.ts';
import { freshStores } from './suites.ts';

const MINUTE = HISTORY_WINDOWS['1h'].spanMs;
const HOUR = HISTORY_WINDOWS['7d'].spanMs;
const DAY = 24 * HOUR;

/** The buckets as [bucket offset from T0, channel, outcome, n], for short expectations. */
export async function history(store: Store, spanMs: number, tenant?: string) {
  const rows: OutcomeBucket[] = await store.outcomes.read({ spanMs, since: 0, tenant });
  return rows.map((r) => [r.bucket - T0, r.channel, r.outcome, r.n]);
}

/**
 * Accepts one email of tenant t1 at `now`, claims as `owner` and reports sent whatever the claim
 * took (another store's cycle may have taken this one, and this cycle another's).
 */
export async function deliverAt(store: Store, now: number, owner = 'w1'): Promise<void> {
  await seedMany(store, [newNotification({ createdAt: now })]);
  const { claimed } = await cycle(store, { owner, now, leaseUntil: now + 30_000 });
  const completions: Completion[] = claimed.map((n) => ({
    seq: n.seq,
    attempt: n.attempts,
    kind: 'sent',
    provider: 'p',
  }));
  const done = await cycle(store, { owner, now, completions, claim: undefined });
  assert.equal(done.applied, claimed.length);
}

/**
 * The delivery history's counters (GET /admin/history): written by the queue's cycle with the
 * completions they count, per tenant, channel, outcome and bucket; pruned past their window.
 */
export function outcomeCountsSuite(name: string, open: () => Promise<Store>): void {
  describe(`delivery history counters (${name})`, () => {
    const fresh = freshStores(open);

    it('counts delivered, failed and skipped per tenant and channel in the minute and hour they ended', async () => {
      const store = await fresh();
      await store.suppressions.add(
        [{ tenant: 't1', channel: 'email', recipient: 'gone@example.com', reason: 'bounce' }],
        T0,
      );
      const [sent, delivered, failed, retried, , sms, push] = await seedMany(store, [
        newNotification(),
        newNotification(),
        newNotification(),
        newNotification(),
        newNotification({ recipient: { email: 'gone@example.com' } }),
        newNotification({ channel: 'sms' }),
        newNotification({ channel: 'push', tenant: 't2' }),
      ]);
      // The claim at T0 + 1 s stops the suppressed one: skipped, in minute 0.
      const claim = await cycle(store);
      assert.equal(claim.suppressed, 1);
      const seq = (id: string | undefined) => claim.claimed.find((n) => n.id === id)?.seq as number;
      const completions: Completion[] = [
        { seq: seq(sent), attempt: 1, kind: 'sent', provider: 'p' },
        { seq: seq(delivered), attempt: 1, kind: 'delivered', provider: 'p' },
        { seq: seq(failed), attempt: 1, kind: 'failed', detail: '550 no such user' },
        { seq: seq(retried), attempt: 1, kind: 'retry', detail: 'timeout', nextAttemptAt: T0 + DAY },
        { seq: seq(push), attempt: 1, kind: 'sent', provider: 'p' },
      ];
      await cycle(store, { now: T0 + 20_000, completions, claim: undefined });
      // The same completions again: their fence fails, and they count nothing more.
      const again = await cycle(store, { now: T0 + 21_000, completions, claim: undefined });
      assert.equal(again.applied, 0);
      // The SMS's lease ran out with its attempts used up: failed, in minute 1.
      const reap = await cycle(store, { now: T0 + 61_000, maxAttempts: 1, claim: undefined });
      assert.equal(reap.reaped, 1);
      assert.ok(sms);

      assert.deepEqual(await history(store, MINUTE, 't1'), [
        [0, 'email', 'DELIVERED', 2],
        [0, 'email', 'FAILED', 1],
        [0, 'email', 'SKIPPED', 1],
        [MINUTE, 'sms', 'FAILED', 1],
      ]);
      assert.deepEqual(await history(store, HOUR, 't1'), [
        [0, 'email', 'DELIVERED', 2],
        [0, 'email', 'FAILED', 1],
        [0, 'email', 'SKIPPED', 1],
        [0, 'sms', 'FAILED', 1],
      ]);
      // Tenant t2 sees its own; without a tenant, every tenant's are summed.
      assert.deepEqual(await history(store, MINUTE, 't2'), [[0, 'push', 'DELIVERED', 1]]);
      assert.deepEqual(await history(store, HOUR), [
        [0, 'email', 'DELIVERED', 2],
        [0, 'email', 'FAILED', 1],
        [0, 'email', 'SKIPPED', 1],
        [0, 'push', 'DELIVERED', 1],
        [0, 'sms', 'FAILED', 1],
      ]);
      // `since` leaves out older buckets.
      const recent = await store.outcomes.read({ spanMs: MINUTE, since: T0 + MINUTE, tenant: 't1' });
      assert.deepEqual(
        recent.map((r) => [r.bucket - T0, r.outcome]),
        [[MINUTE, 'FAILED']],
      );
    });

    it('adds the counts of later cycles to the same bucket', async () => {
      const store = await fresh();
      for (const at of [1000, 2000, 59_999]) await deliverAt(store, T0 + at);
      await deliverAt(store, T0 + MINUTE);
      assert.deepEqual(await history(store, MINUTE, 't1'), [
        [0, 'email', 'DELIVERED', 3],
        [MINUTE, 'email', 'DELIVERED', 1],
      ]);
      assert.deepEqual(await history(store, HOUR, 't1'), [[0, 'email', 'DELIVERED', 4]]);
    });

    it('prunes minute buckets past the last hour and hour buckets past the last 7 days', async () => {
      const store = await fresh();
      await deliverAt(store, T0 + 1000);
      // Two hours later: the minute of T0 is past its window, its hour is not.
      await deliverAt(store, T0 + 2 * HOUR);
      assert.deepEqual(await history(store, MINUTE, 't1'), [[2 * HOUR, 'email', 'DELIVERED', 1]]);
      assert.deepEqual(await history(store, HOUR, 't1'), [
        [0, 'email', 'DELIVERED', 1],
        [2 * HOUR, 'email', 'DELIVERED', 1],
      ]);
      // Eight days later: both hours are past the 7 days.
      await deliverAt(store, T0 + 8 * DAY);
      assert.deepEqual(await history(store, HOUR, 't1'), [[8 * DAY, 'email', 'DELIVERED', 1]]);
      assert.deepEqual(await history(store, MINUTE, 't1'), [[8 * DAY, 'email', 'DELIVERED', 1]]);
    });
  });
}
