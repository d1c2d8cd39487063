import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Channel, Priority } from '../../src/notifications/model.ts';
import type { Store } from '../../src/store/port/index.ts';
import { cycle, newNotification, read, seedMany, T0 } from './queue-fixtures.ts';
import { freshStores } from './suites.ts';

const WEB = (n: number) => ({
  subscription: { endpoint: `https://push.example.com/s/${n}`, keys: { p256dh: 'cDI1Ng', auth: 'YXV0aA' } },
});

/**
 * Notifications to a person (docs/sending-to-people.md) resolved in the claim's transaction: the address read
 * then, SKIPPED with its reason, preferences and their exceptions, suppressions of the resolved
 * address, push targets.
 */
export function resolutionSuite(name: string, open: () => Promise<Store>): void {
  describe(`notifications to a person at claim time (${name})`, () => {
    const fresh = freshStores(open);

    const toPerson = (id: string, channel: Channel, over: { priority?: Priority; category?: string } = {}) =>
      newNotification({
        channel,
        recipient: { id },
        priority: over.priority ?? 'NORMAL',
        category: over.category ?? null,
      });

    async function claimAll(store: Store, items: ReturnType<typeof toPerson>[]) {
      const ids = await seedMany(store, items);
      const result = await cycle(store);
      const byId = new Map(result.claimed.map((r) => [r.id, r]));
      return { ids, result, byId };
    }

    it('resolves the address when claimed, and SKIPs a deleted recipient, a missing address and an opt-out', async () => {
      const store = await fresh();
      await store.recipients.put(
        't1',
        [
          {
            id: 'ada',
            profile: { email: 'ada@example.com', name: 'Ada', locale: 'fr-CA', data: { plan: 'pro' } },
          },
          { id: 'bob', profile: { email: 'bob@example.com' } },
          { id: 'gone', profile: { email: 'gone@example.com' } },
        ],
        T0,
      );
      await store.recipients.setPreferences(
        't1',
        'bob',
        { channels: {}, categories: { news: { email: false } } },
        T0,
      );
      // Changed after acceptance: the claim reads the new address.
      await store.recipients.put(
        't1',
        [
          {
            id: 'ada',
            profile: { email: 'ada@new.example.com', name: 'Ada', locale: 'fr-CA', data: { plan: 'pro' } },
          },
        ],
        T0,
      );
      const items = [
        toPerson('ada', 'email'),
        toPerson('ada', 'sms'),
        toPerson('bob', 'email', { category: 'news' }),
        toPerson('bob', 'email', { category: 'billing' }),
        toPerson('gone', 'email'),
      ];
      const ids = items.map((n) => n.id);
      await seedMany(store, items);
      assert.equal(await store.recipients.remove('t1', 'gone'), true);
      const result = await cycle(store);
      const claimed = new Map(result.claimed.map((r) => [r.id, r]));
      assert.deepEqual([...claimed.keys()].sort(), [ids[0], ids[3]].sort());
      const ada = claimed.get(ids[0] as string);
      assert.deepEqual(ada?.recipient, { email: 'ada@new.example.com' });
      assert.deepEqual(ada?.person, {
        id: 'ada',
        name: 'Ada',
        locale: 'fr-CA',
        timezone: null,
        data: { plan: 'pro' },
      });
      assert.equal(result.suppressed, 3, 'the skipped rows took no slot');
      const skipped = async (id: string) => {
        const { record, events } = await read(store, id);
        assert.equal(record.status, 'SKIPPED');
        assert.equal(record.attempts, 0, 'no attempt used: no provider call');
        assert.deepEqual(record.recipient, { id: record.recipient.id }, 'the stored recipient stays the ID');
        assert.equal(events.length, 1);
        return events[0]?.detail;
      };
      assert.equal(await skipped(ids[1] as string), 'no sms address');
      assert.equal(await skipped(ids[2] as string), 'opted out of news on email');
      assert.equal(await skipped(ids[4] as string), 'recipient deleted');
      const { events } = await read(store, ids[1] as string);
      assert.equal(events[0]?.type, 'SKIPPED');
      assert.equal(events[0]?.source, 'recipient');
    });

    it('sends CRITICAL and required categories whatever the preferences say', async () => {
      const store = await fresh();
      await store.recipients.put('t1', [{ id: 'ada', profile: { phone: '+15550001234' } }], T0);
      await store.recipients.setPreferences('t1', 'ada', { channels: { sms: false }, categories: {} }, T0);
      await store.categories.put(
        't1',
        'security',
        { description: null, required: true, defaultChannels: {} },
        T0,
      );
      const { ids, byId } = await claimAll(store, [
        toPerson('ada', 'sms'),
        toPerson('ada', 'sms', { priority: 'CRITICAL' }),
        toPerson('ada', 'sms', { category: 'security' }),
      ]);
      assert.equal(byId.has(ids[0] as string), false);
      assert.deepEqual(byId.get(ids[1] as string)?.recipient, { phone: '+15550001234' });
      assert.deepEqual(byId.get(ids[2] as string)?.recipient, { phone: '+15550001234' });
      assert.equal((await read(store, ids[0] as string)).events[0]?.detail, 'opted out of sms');
    });

    it("checks suppressions against the resolved address (FAILED), and leaves a person's suppressed push targets out", async () => {
      const store = await fresh();
      await store.recipients.put(
        't1',
        [
          { id: 'ada', profile: { email: 'Ada@Example.com', push: [WEB(1), WEB(2), WEB(3)] } },
          { id: 'bob', profile: { push: [WEB(4)] } },
        ],
        T0,
      );
      await store.suppressions.add(
        [
          { tenant: 't1', channel: 'email', recipient: 'ada@example.com', reason: 'bounce' },
          { tenant: 't1', channel: 'push', recipient: WEB(2).subscription.endpoint, reason: 'unregistered' },
          { tenant: 't1', channel: 'push', recipient: WEB(4).subscription.endpoint, reason: 'unregistered' },
        ],
        T0,
      );
      const { ids, byId } = await claimAll(store, [
        toPerson('ada', 'email'),
        toPerson('ada', 'push'),
        toPerson('bob', 'push'),
      ]);
      const email = await read(store, ids[0] as string);
      assert.equal(email.record.status, 'FAILED');
      assert.match(email.events[0]?.detail ?? '', /recipient suppressed \(bounce since/);
      const push = byId.get(ids[1] as string);
      assert.deepEqual(push?.person?.targets, [WEB(1), WEB(3)]);
      assert.deepEqual(push?.recipient, WEB(1));
      assert.equal((await read(store, ids[2] as string)).record.status, 'FAILED', 'every target suppressed');
    });

    it('removes gone push targets from the profile and suppresses them with the completion', async () => {
      const store = await fresh();
      await store.recipients.put('t1', [{ id: 'ada', profile: { name: 'Ada', push: [WEB(1), WEB(2)] } }], T0);
      const { ids, result } = await claimAll(store, [toPerson('ada', 'push')]);
      const claimed = result.claimed[0];
      assert.ok(claimed);
      await cycle(store, {
        now: T0 + 2000,
        claim: undefined,
        completions: [
          {
            seq: claimed.seq,
            attempt: claimed.attempts,
            kind: 'sent',
            provider: 'webpush',
            detail: 'push target ***.com/s/1: 201',
            notes: [{ provider: 'webpush', detail: 'push target ***.com/s/2: 410 gone' }],
            gone: { tenant: 't1', id: 'ada', keys: [WEB(2).subscription.endpoint], reason: 'unregistered' },
          },
        ],
      });
      const { record, events } = await read(store, ids[0] as string);
      assert.equal(record.status, 'SENT');
      assert.deepEqual(
        events.map((e) => [e.type, e.detail ?? null]),
        [
          ['PROCESSING', null],
          ['ATTEMPT_FAILED', 'push target ***.com/s/2: 410 gone'],
          ['SENT', 'push target ***.com/s/1: 201'],
        ],
      );
      assert.deepEqual((await store.recipients.get('t1', 'ada'))?.profile, { name: 'Ada', push: [WEB(1)] });
      const suppressed = await store.suppressions.list('t1', { limit: 10 });
      assert.deepEqual(
        suppressed.items.map((s) => [s.channel, s.recipient, s.reason]),
        [['push', WEB(2).subscription.endpoint, 'unregistered']],
      );
    });
  });
}
