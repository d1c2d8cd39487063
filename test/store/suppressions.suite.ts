import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Priority } from '../../src/notifications/model.ts';
import type { Store } from '../../src/store/port/index.ts';
import { everyPriority } from '../../src/store/port/queue.ts';
import { LIST_SCAN } from '../../src/store/port/scanned-page.ts';
import { cycle, newNotification, read, seedMany, T0 } from './queue-fixtures.ts';
import { record, seed } from './reports.suite.ts';
import { freshStores } from './suites.ts';

/** Room for two sends on each channel. */
const TWO_EACH = { email: 2, sms: 2, push: 2 };

const bounce = {
  tenant: 't1',
  channel: 'email' as const,
  recipient: 'ada@example.com',
  reason: 'bounce' as const,
};

/** Suppressions (API.md §11): the add rule, tenancy, paging, and the check at claim time. */
export function suppressionsSuite(name: string, open: () => Promise<Store>): void {
  describe(`suppressions store (${name})`, () => {
    const fresh = freshStores(open);

    it('adds once per recipient, widens an unsubscribe but never narrows, and keeps tenants apart', async () => {
      const store = await fresh();
      const [first] = await store.suppressions.add([{ ...bounce, reason: 'unsubscribe' }], T0);
      assert.equal(first?.reason, 'unsubscribe');
      // A bounce stops more than an unsubscribe (which stops LOW only): it replaces it.
      const [widened] = await store.suppressions.add([bounce], T0 + 1);
      assert.equal(widened?.reason, 'bounce');
      assert.equal(widened?.createdAt, T0 + 1);
      // An unsubscribe or another reason after a bounce changes nothing.
      const [kept] = await store.suppressions.add(
        [
          { ...bounce, reason: 'unsubscribe' },
          { ...bounce, reason: 'complaint' },
        ],
        T0 + 2,
      );
      assert.equal(kept?.reason, 'bounce');
      await store.suppressions.add([{ ...bounce, tenant: 't2', reason: 'manual' }], T0 + 3);
      const mine = (await store.suppressions.list('t1', { limit: 10 })).items;
      assert.deepEqual(
        mine.map((s) => [s.recipient, s.reason]),
        [['ada@example.com', 'bounce']],
      );
      assert.equal((await store.suppressions.match([{ ...bounce, tenant: 't3' }])).length, 0);
      assert.equal(await store.suppressions.remove({ ...bounce, tenant: 't2' }), true);
      assert.equal(await store.suppressions.remove({ ...bounce, tenant: 't2' }), false);
      assert.equal((await store.suppressions.list('t1', { limit: 10 })).items.length, 1);
    });

    it('lists newest first by cursor, by channel and by exact recipient', async () => {
      const store = await fresh();
      const entries = Array.from({ length: 5 }, (_, i) => ({
        ...bounce,
        channel: i % 2 === 0 ? ('email' as const) : ('sms' as const),
        recipient: i % 2 === 0 ? `r${i}@example.com` : `+1555010000${i}`,
      }));
      await store.suppressions.add(entries, T0);
      const page1 = (await store.suppressions.list('t1', { limit: 2 })).items;
      assert.deepEqual(
        page1.map((s) => s.recipient),
        ['r4@example.com', '+15550100003'],
      );
      const page2 = (await store.suppressions.list('t1', { limit: 5, before: page1.at(-1)?.id })).items;
      assert.deepEqual(
        page2.map((s) => s.recipient),
        ['r2@example.com', '+15550100001', 'r0@example.com'],
      );
      assert.equal((await store.suppressions.list('t1', { channel: 'sms', limit: 10 })).items.length, 2);
      const exact = (
        await store.suppressions.list('t1', {
          channel: 'email',
          recipient: 'r2@example.com',
          limit: 10,
        })
      ).items;
      assert.deepEqual(
        exact.map((s) => s.recipient),
        ['r2@example.com'],
      );
    });

    it('looks at LIST_SCAN of them at most for a channel filter, and says where it got to', async () => {
      const store = await fresh();
      await store.suppressions.add([{ ...bounce, channel: 'sms', recipient: '+15550100999' }], T0);
      const emails = Array.from({ length: LIST_SCAN + 1 }, (_, i) => ({
        ...bounce,
        recipient: `r${i}@example.com`,
      }));
      await store.suppressions.add(emails, T0);
      const first = await store.suppressions.list('t1', { channel: 'sms', limit: 10 });
      assert.deepEqual(first.items, []);
      assert.notEqual(first.scannedTo, undefined);
      const second = await store.suppressions.list('t1', {
        channel: 'sms',
        limit: 10,
        before: first.scannedTo,
      });
      assert.deepEqual(
        second.items.map((s) => s.recipient),
        ['+15550100999'],
      );
      assert.equal(second.scannedTo, undefined);
    });

    it('fails a suppressed recipient at claim time without a provider attempt; CRITICAL and unsubscribed NORMAL still go', async () => {
      const store = await fresh();
      await store.suppressions.add(
        [
          { ...bounce, recipient: 'bounced@example.com' },
          { ...bounce, recipient: 'unsub@example.com', reason: 'unsubscribe' },
        ],
        T0,
      );
      const make = (email: string, priority: Priority) =>
        // Case differs from the stored key: addresses compare case-insensitively.
        newNotification({ recipient: { email }, priority });
      const ids = await seedMany(store, [
        make('Bounced@Example.com', 'NORMAL'),
        make('bounced@example.com', 'CRITICAL'),
        make('unsub@example.com', 'LOW'),
        make('unsub@example.com', 'NORMAL'),
        make('fine@example.com', 'LOW'),
      ]);
      const [normalBounced, criticalBounced, lowUnsub, normalUnsub, lowFine] = ids as [
        string,
        string,
        string,
        string,
        string,
      ];
      const result = await cycle(store);
      assert.equal(result.suppressed, 2);
      const claimed = new Set(result.claimed.map((r) => r.id));
      assert.deepEqual(
        [criticalBounced, normalUnsub, lowFine].map((id) => claimed.has(id)),
        [true, true, true],
      );
      for (const [id, reason] of [
        [normalBounced, 'bounce'],
        [lowUnsub, 'unsubscribe'],
      ] as const) {
        assert.ok(!claimed.has(id));
        const { record: row, events } = await read(store, id);
        assert.equal(row.status, 'FAILED');
        assert.equal(row.attempts, 0, 'no provider attempt is counted');
        assert.deepEqual(
          events.map((e) => e.type),
          ['FAILED'],
        );
        assert.match(events[0]?.detail ?? '', new RegExp(`recipient suppressed \\(${reason} since `));
      }
    });

    it("keeps an admin's own words as the reason, stops with them what manual stops, and quotes them", async () => {
      const store = await fresh();
      const words = 'asked by phone, ticket 4411 — "no more mail" (é, \u{1F4DE})';
      await store.suppressions.add([{ ...bounce, recipient: 'phoned@example.com', reason: words }], T0);
      const listed = await store.suppressions.list('t1', { limit: 10 });
      assert.deepEqual(
        listed.items.map((s) => s.reason),
        [words],
      );
      const [low, critical] = (await seedMany(store, [
        newNotification({ recipient: { email: 'phoned@example.com' }, priority: 'LOW' }),
        newNotification({ recipient: { email: 'phoned@example.com' }, priority: 'CRITICAL' }),
      ])) as [string, string];
      const result = await cycle(store);
      assert.deepEqual(
        result.claimed.map((r) => r.id),
        [critical],
      );
      const { events } = await read(store, low);
      const detail = events[0]?.detail ?? '';
      assert.ok(detail.startsWith(`recipient suppressed (${JSON.stringify(words)} since `), detail);
    });

    it("gives a stopped row's slot to the next ready row of its priority, in the same step", async () => {
      const store = await fresh();
      await store.suppressions.add([{ ...bounce, recipient: 'bounced@example.com' }], T0);
      const stoppedIds = await seedMany(
        store,
        Array.from({ length: 3 }, () => newNotification({ recipient: { email: 'bounced@example.com' } })),
      );
      const sendable = await seedMany(store, [newNotification(), newNotification()]);
      // Room for two sends: the three stopped rows ahead of them take none of it.
      const result = await cycle(store, {
        claim: { perPriority: [2, 2, 2, 2], sharedLimit: 2, perChannel: everyPriority(TWO_EACH) },
      });
      assert.equal(result.suppressed, 3);
      assert.deepEqual(
        result.claimed.map((r) => r.id),
        sendable,
      );
      for (const id of stoppedIds) assert.equal((await read(store, id)).record.status, 'FAILED');
    });

    it('keeps lower priorities waiting while stopped rows of a higher one fill every round of a step', async () => {
      const store = await fresh();
      await store.suppressions.add([{ ...bounce, recipient: 'bounced@example.com' }], T0);
      const gone = { recipient: { email: 'bounced@example.com' }, priority: 'NORMAL' as const };
      await seedMany(
        store,
        Array.from({ length: 10 }, () => newNotification(gone)),
      );
      const [normal] = await seedMany(store, [newNotification({ priority: 'NORMAL' })]);
      const [low] = await seedMany(store, [newNotification({ priority: 'LOW' })]);
      const claim = { perPriority: [2, 2, 2, 2], sharedLimit: 4, perChannel: everyPriority(TWO_EACH) };
      // Four rounds of two stopped rows: NORMAL rows are still ready, so LOW is not claimed.
      const first = await cycle(store, { claim });
      assert.equal(first.suppressed, 8);
      assert.deepEqual(first.claimed, []);
      const second = await cycle(store, { claim });
      assert.equal(second.suppressed, 2);
      assert.deepEqual(
        second.claimed.map((r) => r.id),
        [normal, low],
      );
    });

    it('commits the suppression a failed completion asks for with its FAILED', async () => {
      const store = await fresh();
      const [id] = await seedMany(store, [newNotification({ recipient: { email: 'gone@example.com' } })]);
      const [claimed] = (await cycle(store)).claimed;
      assert.ok(claimed);
      await cycle(store, {
        claim: undefined,
        completions: [
          {
            seq: claimed.seq,
            attempt: claimed.attempts,
            kind: 'failed',
            provider: 'smtp',
            detail: '550 no such user',
            suppress: { ...bounce, recipient: 'gone@example.com' },
          },
        ],
      });
      assert.equal((await read(store, id as string)).record.status, 'FAILED');
      const [hit] = await store.suppressions.match([{ ...bounce, recipient: 'gone@example.com' }]);
      assert.equal(hit?.reason, 'bounce');
    });

    it('adds the suppression a delivery report asks for, also when the report waited for its message id', async () => {
      const store = await fresh();
      await seed(store, 'SENT', 'twilio', 'SM1');
      const report = {
        provider: 'twilio',
        outcome: 'FAILED' as const,
        at: T0,
        source: 'webhook' as const,
        detail: 'undelivered (error 21610)',
        suppress: 'opt_out' as const,
      };
      assert.equal(await store.reports.apply({ ...report, providerMessageId: 'SM1' }, T0, true), 'applied');
      const key = { tenant: 't1', channel: 'sms' as const, recipient: '+15551234567' };
      assert.equal((await store.suppressions.match([key]))[0]?.reason, 'opt_out');
      await store.suppressions.remove(key);
      // Early: kept pending with what it says, applied when the id is recorded.
      const id = await seed(store, 'PROCESSING');
      assert.equal(await store.reports.apply({ ...report, providerMessageId: 'SM2' }, T0, true), 'pending');
      await record(store, id, 'SENT', 'twilio', 'SM2');
      assert.equal(await store.reports.applyPending('twilio', ['SM2'], T0), 1);
      assert.equal((await store.suppressions.match([key]))[0]?.reason, 'opt_out');
    });

    it("matches a fallback's messages to reports under its primary's name", async () => {
      const store = await fresh();
      const id = await seed(store, 'SENT', 'smtp-fallback', 'm1@mail.example.com');
      const outcome = await store.reports.apply(
        {
          provider: 'smtp',
          providerMessageId: 'm1@mail.example.com',
          outcome: 'DELIVERED',
          at: T0,
          source: 'webhook',
        },
        T0,
        true,
      );
      assert.equal(outcome, 'applied');
      assert.equal((await read(store, id)).record.status, 'DELIVERED');
    });
  });
}
