import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallbackRecord, WaitingMessage } from '../../src/store/port/callbacks.ts';
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

const waiting = (id: string, notificationId: string, attempts = 0, dueAt = T0) => ({
  id,
  callbackId: 'cb1',
  notificationId,
  body: `{"m":"${id}"}`,
  attempts,
  dueAt,
  createdAt: T0,
});

/** Puts messages in cb1's outbox the way the sender does: a head step that records them. */
async function toOutbox(store: Store, messages: WaitingMessage[]): Promise<void> {
  const from = await store.callbacks.leaseHead('cb1', 'head', T0, T0 + 10_000);
  assert.ok(from !== undefined);
  const progress = { attempts: [], waiting: messages };
  assert.ok(await store.callbacks.advance('cb1', 'head', from, `${from}+`, progress, T0, T0 + 10_000));
}

/**
 * Callbacks, their places in the status log and their outbox (docs/callbacks.md): tenancy, the head's
 * lease and place, claim order and leases.
 */
export function callbacksSuite(name: string, open: () => Promise<Store>): void {
  describe(`callbacks store (${name})`, () => {
    const fresh = freshStores(open);

    it('keeps callbacks per tenant; rotation keeps the previous secret; removal takes the messages', async () => {
      const store = await fresh();
      await store.callbacks.create(callback(), 'c0', 10);
      await store.callbacks.create(callback({ id: 'cb2', tenant: 'other' }), 'c0', 10);
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
      await toOutbox(store, [waiting('m1', 'n1')]);
      assert.equal(await store.callbacks.remove('other', 'cb1'), false);
      assert.equal(await store.callbacks.remove('acme', 'cb1'), true);
      assert.deepEqual(await store.callbacks.dueCallbacks(T0 + 10, 10), []);
    });

    it('caps the callbacks of a tenant, concurrent creations included, and no other tenant', async () => {
      const store = await fresh();
      const made = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.callbacks.create(callback({ id: `cb${i}` }), 'c0', 3)),
      );
      assert.equal(made.filter(Boolean).length, 3);
      assert.equal((await store.callbacks.list('acme')).length, 3);
      assert.equal(await store.callbacks.create(callback({ id: 'cbo', tenant: 'other' }), 'c0', 3), true);
      assert.equal(
        await store.callbacks.remove('acme', (await store.callbacks.list('acme'))[0]?.id ?? ''),
        true,
      );
      assert.equal(await store.callbacks.create(callback({ id: 'cb9' }), 'c0', 3), true);
    });

    it("leases a callback's head to one worker at a time and moves its place only for that worker", async () => {
      const store = await fresh();
      await store.callbacks.create(callback(), 'c0', 10);
      assert.equal(await store.callbacks.leaseHead('cb1', 'w1', T0, T0 + 10_000), 'c0');
      assert.equal(await store.callbacks.leaseHead('cb1', 'w2', T0 + 1, T0 + 10_001), undefined);
      // Renewed by its holder; taken by another once it ran out.
      assert.equal(await store.callbacks.leaseHead('cb1', 'w1', T0 + 2, T0 + 20_000), 'c0');
      assert.equal(await store.callbacks.leaseHead('cb1', 'w2', T0 + 19_999, T0 + 30_000), undefined);
      assert.equal(await store.callbacks.leaseHead('cb1', 'w2', T0 + 20_000, T0 + 30_000), 'c0');
      const attempt = {
        callbackId: 'cb1',
        messageId: 'm1',
        notificationId: 'n1',
        attempt: 1,
        statusCode: 204,
        error: null,
      };
      const progress = { attempts: [attempt], waiting: [waiting('m2', 'n2', 1, T0 + 60_000)] };
      // The worker whose lease ran out records nothing.
      assert.equal(await store.callbacks.advance('cb1', 'w1', 'c0', 'c1', progress, T0, T0 + 40_000), false);
      // Nor does one that read from another place than the one recorded.
      assert.equal(await store.callbacks.advance('cb1', 'w2', 'c9', 'c1', progress, T0, T0 + 40_000), false);
      assert.deepEqual(await store.callbacks.deliveries('acme', 'cb1', undefined, 10), []);
      assert.deepEqual(await store.callbacks.dueCallbacks(T0 + 60_000, 10), []);
      assert.equal(await store.callbacks.advance('cb1', 'w2', 'c0', 'c1', progress, T0, T0 + 40_000), true);
      assert.deepEqual(
        (await store.callbacks.deliveries('acme', 'cb1', undefined, 10))?.map((a) => [
          a.messageId,
          a.statusCode,
        ]),
        [['m1', 204]],
      );
      // The message bound for a retry waits in the outbox until it is due, its attempt counted.
      assert.deepEqual(await store.callbacks.pendingAmong('cb1', ['n1', 'n2', 'n3']), new Set(['n2']));
      assert.deepEqual(await store.callbacks.dueCallbacks(T0 + 59_999, 10), []);
      const [m2] = await store.callbacks.claim('cb1', 'w3', T0 + 60_000, T0 + 90_000, 10);
      assert.deepEqual([m2?.id, m2?.attempt, m2?.body], ['m2', 2, '{"m":"m2"}']);
      // The lease was renewed with the step; the place is where it moved to.
      assert.equal(await store.callbacks.leaseHead('cb1', 'w1', T0 + 39_999, T0 + 50_000), undefined);
      assert.equal(await store.callbacks.leaseHead('cb1', 'w1', T0 + 40_000, T0 + 50_000), 'c1');
      // A lease that ends now lets another take it at once (a worker closing).
      assert.equal(await store.callbacks.leaseHead('cb1', 'w1', T0 + 40_001, T0 + 40_001), 'c1');
      assert.equal(await store.callbacks.leaseHead('cb1', 'w2', T0 + 40_001, T0 + 50_000), 'c1');
      await store.callbacks.disable('cb1', '410', T0 + 40_002);
      assert.equal(await store.callbacks.leaseHead('cb1', 'w2', T0 + 40_003, T0 + 50_000), undefined);
    });

    it("keeps a waiting message's trace context for its retry", async () => {
      const store = await fresh();
      await store.callbacks.create(callback(), 'c0', 10);
      const traceContext = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      await toOutbox(store, [{ ...waiting('t1', 'nT'), traceContext }, waiting('u1', 'nU')]);
      const claimed = await store.callbacks.claim('cb1', 'w1', T0, T0 + 30_000, 10);
      assert.deepEqual(
        claimed.map((m) => [m.id, m.traceContext]),
        [
          ['t1', traceContext],
          ['u1', undefined],
        ],
      );
    });

    it("claims a notification's messages one at a time, in order, and fences completions by lease", async () => {
      const store = await fresh();
      await store.callbacks.create(callback(), 'c0', 10);
      await toOutbox(store, [
        waiting('a1', 'nA'),
        waiting('b1', 'nB'),
        waiting('a2', 'nA'),
        waiting('a3', 'nA'),
      ]);
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

    it('prunes attempts and settled messages older than the history kept, oldest first, never a pending one', async () => {
      const store = await fresh();
      await store.callbacks.create(callback(), 'c0', 10);
      await toOutbox(store, [waiting('m1', 'n1'), waiting('m2', 'n2'), waiting('m3', 'n3')]);
      const claimed = await store.callbacks.claim('cb1', 'w1', T0, T0 + 30_000, 10);
      const settle = (id: string, kind: 'delivered' | 'failed', at: number) =>
        store.callbacks.complete(
          'w1',
          [
            {
              message: claimed.find((m) => m.id === id) as (typeof claimed)[0],
              outcome: { kind },
              statusCode: 200,
              error: null,
            },
          ],
          at,
        );
      await settle('m1', 'delivered', T0 + 1);
      await settle('m2', 'failed', T0 + 2);
      // m3 stays pending (its lease ran out): kept whatever its age.
      const listed = async () =>
        (await store.callbacks.deliveries('acme', 'cb1', undefined, 10))?.map((a) => a.messageId);
      assert.deepEqual(await listed(), ['m2', 'm1']);
      // At most `limit` rows of each table a step, oldest first.
      assert.equal(await store.callbacks.prune(T0 + 100, 1), 2);
      assert.deepEqual(await listed(), ['m2']);
      assert.equal(await store.callbacks.prune(T0 + 100, 10), 2);
      assert.deepEqual(await listed(), []);
      assert.equal(await store.callbacks.prune(T0 + 100, 10), 0);
      const [m3] = await store.callbacks.claim('cb1', 'w2', T0 + 40_000, T0 + 70_000, 10);
      assert.equal(m3?.id, 'm3');
      // Settled now, m3 goes with its change's age; its attempt, made at `before`, stays.
      await store.callbacks.complete(
        'w2',
        [
          {
            message: m3 as (typeof claimed)[0],
            outcome: { kind: 'delivered' },
            statusCode: 204,
            error: null,
          },
        ],
        T0 + 40_001,
      );
      assert.equal(await store.callbacks.prune(T0 + 40_001, 10), 1);
      assert.deepEqual(await listed(), ['m3']);
    });

    it('gives up the pending messages of a disabled callback', async () => {
      const store = await fresh();
      await store.callbacks.create(callback(), 'c0', 10);
      await toOutbox(store, [waiting('m1', 'n1')]);
      await store.callbacks.disable('cb1', '410', T0 + 1);
      assert.deepEqual(await store.callbacks.enabled(), []);
      assert.equal((await store.callbacks.get('acme', 'cb1'))?.disabledReason, '410');
      assert.deepEqual(await store.callbacks.dueCallbacks(T0 + 2, 10), []);
    });
  });
}
