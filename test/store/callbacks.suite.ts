import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallbackRecord } from '../../src/store/port/callbacks.ts';
import type { Store } from '../../src/store/port/index.ts';
import { T0 } from './queue-fixtures.ts';
import { freshStores } from './suites.ts';

const callback = (over: Partial<CallbackRecord> = {}): CallbackRecord => ({
  id: 'cb1',
  tenant: 'acme',
  url: 'https://example.com/hook',
  events: ['SENT', 'DELIVERED'],
  secret: 'whsec_x',
  previousSecret: null,
  rotatedAt: null,
  disabledAt: null,
  disabledReason: null,
  createdAt: T0,
  ...over,
});

const message = (id: string, notificationId: string, callbackId = 'cb1') => ({
  id,
  callbackId,
  notificationId,
  body: `{"m":"${id}"}`,
});

/** Callbacks and their outbox (API.md §10): tenancy, the fan-out cursor, claim order and leases. */
export function callbacksSuite(name: string, open: () => Promise<Store>): void {
  describe(`callbacks store (${name})`, () => {
    const fresh = freshStores(open);

    it('keeps callbacks per tenant; rotation keeps the previous secret; removal takes the messages', async () => {
      const store = await fresh();
      await store.callbacks.create(callback());
      await store.callbacks.create(callback({ id: 'cb2', tenant: 'other' }));
      assert.deepEqual(
        (await store.callbacks.list('acme')).map((c) => c.id),
        ['cb1'],
      );
      assert.equal(await store.callbacks.get('other', 'cb1'), undefined);
      assert.equal(await store.callbacks.rotateSecret('other', 'cb1', 'whsec_y', T0), false);
      assert.equal(await store.callbacks.rotateSecret('acme', 'cb1', 'whsec_y', T0 + 5), true);
      const rotated = await store.callbacks.get('acme', 'cb1');
      assert.deepEqual(
        [rotated?.secret, rotated?.previousSecret, rotated?.rotatedAt],
        ['whsec_y', 'whsec_x', T0 + 5],
      );
      assert.deepEqual(rotated?.events, ['SENT', 'DELIVERED']);
      assert.ok(await store.callbacks.fanOut(null, 'c1', [message('m1', 'n1')], T0));
      assert.equal(await store.callbacks.remove('other', 'cb1'), false);
      assert.equal(await store.callbacks.remove('acme', 'cb1'), true);
      assert.deepEqual(await store.callbacks.dueCallbacks(T0 + 10, 10), []);
    });

    it('moves the fan-out cursor only from where the caller read it', async () => {
      const store = await fresh();
      await store.callbacks.create(callback());
      assert.equal(await store.callbacks.fanoutCursor(), null);
      assert.equal(await store.callbacks.fanOut(null, 'c1', [message('m1', 'n1')], T0), true);
      // A second worker that read the same cursor loses, and adds nothing.
      assert.equal(await store.callbacks.fanOut(null, 'c1', [message('m2', 'n1')], T0), false);
      assert.equal(await store.callbacks.fanoutCursor(), 'c1');
      const claimed = await store.callbacks.claim('cb1', 'w1', T0, T0 + 30_000, 10);
      assert.deepEqual(
        claimed.map((m) => m.id),
        ['m1'],
      );
    });

    it("claims a notification's messages one at a time, in order, and fences completions by lease", async () => {
      const store = await fresh();
      await store.callbacks.create(callback());
      await store.callbacks.fanOut(
        null,
        'c1',
        [message('a1', 'nA'), message('b1', 'nB'), message('a2', 'nA'), message('a3', 'nA')],
        T0,
      );
      assert.deepEqual(await store.callbacks.dueCallbacks(T0, 10), ['cb1']);
      const first = await store.callbacks.claim('cb1', 'w1', T0, T0 + 30_000, 10);
      assert.deepEqual(
        first.map((m) => [m.id, m.attempt]),
        [
          ['a1', 1],
          ['b1', 1],
        ],
      );
      // Leased: no other worker gets them, nor a2 while a1 is pending.
      assert.deepEqual(await store.callbacks.claim('cb1', 'w2', T0 + 1, T0 + 30_000, 10), []);
      const [a1, b1] = first as [(typeof first)[0], (typeof first)[0]];
      await store.callbacks.complete(
        'w1',
        [{ message: a1, outcome: { kind: 'retry', retryAt: T0 + 1000 }, statusCode: 500, error: null }],
        T0 + 2,
      );
      await store.callbacks.complete(
        'w1',
        [{ message: b1, outcome: { kind: 'delivered' }, statusCode: 204, error: null }],
        T0 + 2,
      );
      // a1 waits for its retry; a2 still waits behind it.
      assert.deepEqual(await store.callbacks.claim('cb1', 'w2', T0 + 3, T0 + 30_000, 10), []);
      const again = await store.callbacks.claim('cb1', 'w2', T0 + 1000, T0 + 31_000, 10);
      assert.deepEqual(
        again.map((m) => [m.id, m.attempt]),
        [['a1', 2]],
      );
      // A completion from the first lease's owner is stale now and changes nothing.
      await store.callbacks.complete(
        'w1',
        [{ message: a1, outcome: { kind: 'delivered' }, statusCode: 204, error: null }],
        T0 + 1001,
      );
      assert.deepEqual(await store.callbacks.claim('cb1', 'w3', T0 + 1002, T0 + 31_000, 10), []);
      await store.callbacks.complete(
        'w2',
        [
          {
            message: again[0] as (typeof again)[0],
            outcome: { kind: 'delivered' },
            statusCode: 200,
            error: null,
          },
        ],
        T0 + 1003,
      );
      assert.deepEqual(
        (await store.callbacks.claim('cb1', 'w3', T0 + 1004, T0 + 31_000, 10)).map((m) => m.id),
        ['a2'],
      );
      const attempts = await store.callbacks.deliveries('acme', 'cb1', undefined, 10);
      assert.deepEqual(
        attempts?.map((a) => [a.messageId, a.attempt, a.statusCode]),
        [
          ['a1', 2, 200],
          ['a1', 1, 204],
          ['b1', 1, 204],
          ['a1', 1, 500],
        ],
      );
      assert.equal(await store.callbacks.deliveries('other', 'cb1', undefined, 10), undefined);
      // An expired lease is claimed again, one more attempt.
      const [a2] = await store.callbacks.claim('cb1', 'w4', T0 + 40_000, T0 + 70_000, 10);
      assert.deepEqual([a2?.id, a2?.attempt], ['a2', 2]);
    });

    it('gives up the pending messages of a disabled callback', async () => {
      const store = await fresh();
      await store.callbacks.create(callback());
      await store.callbacks.fanOut(null, 'c1', [message('m1', 'n1')], T0);
      await store.callbacks.disable('cb1', '410', T0 + 1);
      assert.deepEqual(await store.callbacks.enabled(), []);
      assert.equal((await store.callbacks.get('acme', 'cb1'))?.disabledReason, '410');
      assert.deepEqual(await store.callbacks.dueCallbacks(T0 + 2, 10), []);
    });
  });
}
