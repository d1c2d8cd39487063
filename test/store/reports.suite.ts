import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { DeliveryReport } from '../../src/notifications/delivery-report.ts';
import type { Status } from '../../src/notifications/model.ts';
import type { Store } from '../../src/store/port/index.ts';
import { encodeNotification } from '../../src/store/port/notifications.ts';

const T0 = Date.UTC(2026, 0, 1);

/**
 * Puts a notification where the scheduler leaves it after a send: `status`, with the provider
 * and its message id recorded. Done in SQL because the scheduler's completion is its own port.
 */
export async function seed(
  store: Store,
  status: Status,
  provider?: string,
  messageId?: string,
): Promise<string> {
  const id = randomUUID();
  await store.notifications.insertMany(
    [
      encodeNotification({
        id,
        tenant: 't1',
        channel: 'sms',
        priority: 'NORMAL',
        recipient: { phone: '+15551234567' },
        templateKey: null,
        templateVersion: null,
        content: { text: 'hi' },
        variables: null,
        metadata: null,
        idempotencyKey: null,
        requestHash: null,
        scheduledAt: null,
        expiresAt: null,
        createdAt: T0,
      }),
    ],
    T0,
  );
  await record(store, id, status, provider ?? null, messageId ?? null);
  return id;
}

/** Sets status, provider and provider message id the way the scheduler's completion does. */
export async function record(
  store: Store,
  id: string,
  status: Status,
  provider: string | null,
  messageId: string | null,
) {
  if (store.kind === 'sqlite') {
    const { db } = store as unknown as { db: import('better-sqlite3').Database };
    db.prepare(
      'UPDATE notifications SET status = ?, queue_state = NULL, provider = ?, provider_message_id = ? WHERE id = ?',
    ).run(status, provider, messageId, id);
  } else {
    const { sql } = store as unknown as { sql: import('postgres').Sql };
    await sql`UPDATE notifications SET status = ${status}, queue_state = NULL, provider = ${provider},
      provider_message_id = ${messageId} WHERE id = ${id}`;
  }
}

const report = (
  messageId: string,
  outcome: DeliveryReport['outcome'],
  extra: Partial<DeliveryReport> = {},
) => ({
  provider: 'twilio',
  providerMessageId: messageId,
  outcome,
  at: T0,
  source: 'webhook' as const,
  ...extra,
});

/** Behaviour of `store.reports` that every adapter must show. */
export function reportsSuite(name: string, open: () => Promise<Store>): void {
  describe(`${name}: delivery reports`, () => {
    let store: Store;
    before(async () => {
      store = await open();
    });
    after(() => store.close());

    const view = async (id: string) => {
      const found = await store.notifications.get('t1', id);
      assert.ok(found);
      return found;
    };

    it('moves a SENT notification to DELIVERED with an event naming the provider and source', async () => {
      const sid = `SM${randomUUID()}`;
      const id = await seed(store, 'SENT', 'twilio', sid);
      assert.equal(
        await store.reports.apply(report(sid, 'DELIVERED', { detail: 'delivered' }), T0 + 5, true),
        'applied',
      );
      const { record, events } = await view(id);
      assert.equal(record.status, 'DELIVERED');
      assert.deepEqual(events.at(-1), {
        type: 'DELIVERED',
        at: T0 + 5,
        provider: 'twilio',
        detail: 'delivered',
        source: 'webhook',
      });
    });

    it('records a repeated report as a WEBHOOK event without changing the status', async () => {
      const sid = `SM${randomUUID()}`;
      const id = await seed(store, 'SENT', 'twilio', sid);
      await store.reports.apply(report(sid, 'DELIVERED'), T0 + 1, true);
      assert.equal(
        await store.reports.apply(report(sid, 'DELIVERED', { at: T0 + 1 }), T0 + 2, true),
        'unchanged',
      );
      const { record, events } = await view(id);
      assert.equal(record.status, 'DELIVERED');
      assert.deepEqual(
        events.map((e) => e.type),
        ['DELIVERED', 'WEBHOOK'],
      );
    });

    it('never takes DELIVERED back when an older report arrives late', async () => {
      const sid = `SM${randomUUID()}`;
      const id = await seed(store, 'SENT', 'twilio', sid);
      await store.reports.apply(report(sid, 'DELIVERED'), T0 + 1, true);
      assert.equal(
        await store.reports.apply(report(sid, 'SENT', { detail: 'sent' }), T0 + 2, true),
        'unchanged',
      );
      assert.equal(await store.reports.apply(report(sid, 'FAILED'), T0 + 3, true), 'unchanged');
      const { record, events } = await view(id);
      assert.equal(record.status, 'DELIVERED');
      assert.equal(events.at(-2)?.type, 'WEBHOOK');
      assert.match(events.at(-2)?.detail ?? '', /SENT reported: sent/);
    });

    it('fails a SENT notification on a FAILED report', async () => {
      const sid = `SM${randomUUID()}`;
      const id = await seed(store, 'SENT', 'twilio', sid);
      assert.equal(
        await store.reports.apply(report(sid, 'FAILED', { source: 'receipt' }), T0, true),
        'applied',
      );
      const { record, events } = await view(id);
      assert.equal(record.status, 'FAILED');
      assert.equal(events.at(-1)?.source, 'receipt');
    });

    it('keeps a report for an unrecorded message id and applies it once the id is recorded', async () => {
      const sid = `SM${randomUUID()}`;
      const id = await seed(store, 'PROCESSING');
      assert.equal(await store.reports.apply(report(sid, 'SENT'), T0 + 1, true), 'pending');
      assert.equal(
        await store.reports.apply(report(sid, 'DELIVERED', { at: T0 + 2 }), T0 + 2, true),
        'pending',
      );
      assert.equal((await view(id)).events.length, 0);
      await record(store, id, 'SENT', 'twilio', sid);
      assert.equal(await store.reports.applyPending('twilio', [sid, 'SM-unknown'], T0 + 10), 2);
      const { record: after, events } = await view(id);
      assert.equal(after.status, 'DELIVERED');
      assert.deepEqual(
        events.map((e) => e.type),
        ['WEBHOOK', 'DELIVERED'],
      );
      // Applied once: a second call finds nothing left.
      assert.equal(await store.reports.applyPending('twilio', [sid], T0 + 11), 0);
    });

    it('applies pending reports in the order the provider sent them', async () => {
      const sid = `SM${randomUUID()}`;
      const id = await seed(store, 'PROCESSING');
      await store.reports.apply(report(sid, 'DELIVERED', { at: T0 + 9 }), T0 + 1, true);
      await store.reports.apply(report(sid, 'SENT', { at: T0 + 3 }), T0 + 2, true);
      await record(store, id, 'SENT', 'twilio', sid);
      await store.reports.applyPending('twilio', [sid], T0 + 10);
      const { record: after, events } = await view(id);
      assert.equal(after.status, 'DELIVERED');
      assert.deepEqual(
        events.map((e) => e.type),
        ['WEBHOOK', 'DELIVERED'],
      );
    });

    it('matches by provider as well as message id', async () => {
      const sid = `same-${randomUUID()}`;
      const id = await seed(store, 'SENT', 'smpp', sid);
      assert.equal(await store.reports.apply(report(sid, 'DELIVERED'), T0, true), 'pending');
      assert.equal((await view(id)).record.status, 'SENT');
    });

    it('records but does not apply a report while an attempt holds the notification', async () => {
      const sid = `SM${randomUUID()}`;
      const id = await seed(store, 'RETRYING', 'twilio', sid);
      assert.equal(await store.reports.apply(report(sid, 'DELIVERED'), T0, true), 'unchanged');
      const { record, events } = await view(id);
      assert.equal(record.status, 'RETRYING');
      assert.match(events.at(-1)?.detail ?? '', /attempt in progress/);
    });

    it('purges pending reports received before a cut-off', async () => {
      const old = `SM${randomUUID()}`;
      const fresh = `SM${randomUUID()}`;
      await store.reports.apply(report(old, 'DELIVERED'), T0 - 1000, true);
      await store.reports.apply(report(fresh, 'DELIVERED'), T0 + 1000, true);
      assert.ok((await store.reports.purgePending(T0)) >= 1);
      const id = await seed(store, 'SENT', 'twilio', fresh);
      const oldId = await seed(store, 'SENT', 'twilio', old);
      await store.reports.applyPending('twilio', [fresh, old], T0 + 2000);
      assert.equal((await view(id)).record.status, 'DELIVERED');
      assert.equal((await view(oldId)).record.status, 'SENT');
    });

    it('applies the same report delivered again once: no second event, not kept twice', async () => {
      const sid = `SM${randomUUID()}`;
      const id = await seed(store, 'SENT', 'twilio', sid);
      const same = report(sid, 'DELIVERED', { detail: 'delivered' });
      assert.equal(await store.reports.apply(same, T0 + 1, true), 'applied');
      assert.equal(await store.reports.apply(same, T0 + 2, true), 'duplicate');
      assert.equal(
        await store.reports.apply({ ...same, outcome: 'SENT', identity: 'twilio:sent:' }, T0 + 3, true),
        'unchanged',
      );
      assert.equal(
        await store.reports.apply(
          { ...same, outcome: 'SENT', identity: 'twilio:sent:', at: T0 + 9 },
          T0 + 4,
          true,
        ),
        'duplicate',
        'an identity given by the provider parser wins over the time',
      );
      assert.deepEqual(
        (await view(id)).events.map((e) => e.type).filter((t) => t !== 'QUEUED'),
        ['DELIVERED', 'WEBHOOK'],
      );
      const early = `SM${randomUUID()}`;
      assert.equal(await store.reports.apply(report(early, 'DELIVERED'), T0, true), 'pending');
      assert.equal(await store.reports.apply(report(early, 'DELIVERED'), T0 + 1, true), 'duplicate');
    });

    it('keeps no pending report past the cap, and counts them per provider', async () => {
      const before = await store.reports.pendingCount('capped');
      assert.equal(
        await store.reports.apply({ ...report(`SM${randomUUID()}`, 'SENT'), provider: 'capped' }, T0, true),
        'pending',
      );
      assert.equal(await store.reports.pendingCount('capped'), before + 1);
      assert.equal(
        await store.reports.apply({ ...report(`SM${randomUUID()}`, 'SENT'), provider: 'capped' }, T0, false),
        'dropped',
      );
      assert.equal(await store.reports.pendingCount('capped'), before + 1);
    });

    it('accepts a single-use token once, forgets it on request or once old', async () => {
      const token = randomUUID();
      assert.equal(await store.reports.useToken('mailgun', token, T0, T0 - 600_000), true);
      assert.equal(await store.reports.useToken('mailgun', token, T0 + 1, T0 - 600_000), false);
      await store.reports.forgetToken('mailgun', token);
      assert.equal(await store.reports.useToken('mailgun', token, T0 + 2, T0 - 600_000), true);
      // Seen at T0 + 2: forgotten once the cut-off passes it.
      assert.equal(await store.reports.useToken('mailgun', token, T0 + 700_000, T0 + 100_000), true);
    });
  });
}
