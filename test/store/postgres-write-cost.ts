// What PostgreSQL writes for one notification (docs/scale-out.md, "Cost per notification"): the
// parts of it the schema and the ingest statement decide, held here so that they do not grow back.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { urgentShare } from '../../src/dispatch/scheduler.ts';
import { notificationId } from '../../src/notifications/ids.ts';
import { definitionKey } from '../../src/store/port/workflow-runs.ts';
import type { createPostgresStore } from '../../src/store/postgres/index.ts';
import { newTrigger, workflowRecord } from '../helpers/workflow-fixtures.ts';
import { ALL, cycle, newNotification, T0 } from './queue-fixtures.ts';

type Open = (onStatement?: (text: string) => void) => ReturnType<typeof createPostgresStore>;

const item = (n: number) =>
  newNotification({ id: notificationId(Date.UTC(2026, 0, 1) + n), createdAt: Date.UTC(2026, 0, 1) });

export function writeCostSuite(open: Open): void {
  describe('PostgreSQL: the database work of one notification', () => {
    it('writes each event into two indexes: a notification history and the status log', async () => {
      const { sql, close } = await open();
      try {
        // Partial indexes (a delivery report's key) are written for the rare events they cover only.
        const rows = await sql<{ name: string }[]>`
          SELECT indexrelid::regclass::text AS name FROM pg_index
           WHERE indrelid = 'notification_events'::regclass AND indpred IS NULL ORDER BY 1`;
        assert.deepEqual(
          rows.map((r) => r.name),
          ['notification_events_by_notification', 'notification_events_log'],
        );
      } finally {
        await close();
      }
    });

    it('accepts a batch without keys in one statement sent alone (its own transaction), one with a key between BEGIN and COMMIT, the wake-up hint riding on each', async () => {
      const sent: string[] = [];
      const store = await open((text) => sent.push(text));
      try {
        let woken = 0;
        let wake: () => void = () => undefined;
        const woke = new Promise<void>((resolve) => {
          wake = resolve;
        });
        await store.wakeups.subscribe(() => {
          woken += 1;
          wake();
        });
        const items = [item(1), item(2), item(3)];
        sent.length = 0;
        await store.notifications.insertMany(items, 0);
        // One round trip: no BEGIN and no COMMIT around it.
        assert.equal(sent.length, 1, sent.join('\n---\n'));
        const statements = sent;
        // A plain insert without keys: a speculative one (ON CONFLICT) writes a confirmation WAL
        // record a row and probes every unique index first (#48).
        assert.doesNotMatch(statements[0] ?? '', /ON CONFLICT/);
        sent.length = 0;
        const keyed = { ...item(4), idempotencyKey: 'k-4' };
        await store.notifications.insertMany([keyed], 0);
        assert.match(
          sent.find((text) => /INSERT INTO notifications/.test(text)) ?? '',
          /ON CONFLICT DO NOTHING/,
        );
        // A skipped row is resolved in the same transaction as the rest of its group.
        assert.deepEqual(
          sent.map((text) => /^\s*(begin|commit)\b/i.exec(text)?.[1]?.toLowerCase() ?? 'statement'),
          ['begin', 'statement', 'commit'],
        );
        const again = await store.notifications.insertMany([{ ...item(5), idempotencyKey: 'k-4' }], 0);
        assert.equal(again[0]?.record.id, keyed.id);
        await woke;
        assert.ok(woken >= 1);
        assert.equal(
          (
            await store.notifications.existing(
              't1',
              items.map((n) => n.id),
            )
          ).size,
          3,
        );
      } finally {
        await store.close();
      }
    });

    it("counts a step's due rows in one read; runs an urgent lane cycle that completes and claims in five statements between BEGIN and COMMIT: events written once, no nextDueAt read, no NORMAL or LOW heads (#48)", async () => {
      const sent: string[] = [];
      const store = await open((text) => sent.push(text));
      try {
        const critical = (n: number) => ({ ...item(n), priority: 'CRITICAL' as const });
        await store.notifications.insertMany([critical(200)], 0);
        sent.length = 0;
        const [first] = (await cycle(store, { claim: urgentShare(ALL), urgent: true })).claimed;
        assert.ok(first);
        // A cycle that promotes counts each priority's due rows in one read, not one a priority.
        const dueReads = sent.filter((text) =>
          /queue_state = 'waiting' AND priority = \d+ AND due_at/.test(text),
        );
        assert.equal(dueReads.length, 1, dueReads.join('\n---\n'));
        await store.notifications.insertMany(
          [critical(201), { ...item(202), priority: 'NORMAL' }, { ...item(203), priority: 'LOW' }],
          0,
        );
        // What the lane does when a CRITICAL's send returns and another CRITICAL is committed: its
        // completion (the sandbox's copy with it) and the claim, in one cycle on its connection.
        const lane = (over: Parameters<typeof cycle>[1]) =>
          cycle(store, { promoteLimit: 0, reapLimit: 0, urgent: true, now: T0 + 2000, ...over });
        sent.length = 0;
        const result = await lane({
          completions: [
            {
              seq: first.seq,
              attempt: first.attempts,
              kind: 'delivered',
              provider: 'sandbox',
              copy: { channel: 'email', recipient: first.recipient, content: { subject: 's', text: 't' } },
            },
          ],
          claim: urgentShare(ALL),
        });
        assert.equal(result.applied, 1);
        assert.deepEqual(
          result.claimed.map((r) => r.priority),
          ['CRITICAL'],
        );
        // BEGIN, the completion, the copy, CRITICAL's claim (the pauses read with it, and no HIGH
        // ready, so no HIGH claim), every event (SENT, DELIVERED, PROCESSING), the delivery
        // history, COMMIT.
        // (The delivery history's prune, once a minute a writer, falls on this first count.)
        const statements = sent.filter(
          (text) => !/^\s*(begin|commit)\b/i.test(text) && !/DELETE FROM outcome_counts/.test(text),
        );
        assert.equal(statements.length, 5, statements.join('\n---\n'));
        assert.equal(statements.filter((text) => /INSERT INTO notification_events/.test(text)).length, 1);
        assert.equal(statements.filter((text) => /min\(due_at\)/.test(text)).length, 0);
        assert.equal(result.nextDueAt, null);
        const events = (await store.notifications.get('t1', first.id))?.events.map((e) => e.type);
        assert.deepEqual(events?.slice(-2), ['SENT', 'DELIVERED']);
        // A retry the lane writes is the due time it answers, without reading the table.
        const [next] = result.claimed;
        assert.ok(next);
        const retried = await lane({
          now: T0 + 3000,
          completions: [
            {
              seq: next.seq,
              attempt: next.attempts,
              kind: 'retry',
              detail: 'busy',
              nextAttemptAt: T0 + 9000,
            },
          ],
        });
        assert.equal(retried.nextDueAt, T0 + 9000);
      } finally {
        await store.close();
      }
    });

    it('resolves every person of a claim in one read of recipients and one of categories (#50)', async () => {
      const sent: string[] = [];
      const store = await open((text) => sent.push(text));
      try {
        const people = Array.from({ length: 40 }, (_, i) => ({
          id: `p${i}`,
          profile: { email: `p${i}@example.com` },
        }));
        await store.recipients.put('t1', people, 0);
        await store.notifications.insertMany(
          people.map((p, i) => ({
            ...item(100 + i),
            category: i % 2 === 0 ? 'news' : null,
            encoded: { ...item(100 + i).encoded, recipient: JSON.stringify({ id: p.id }) },
          })),
          0,
        );
        sent.length = 0;
        const result = await cycle(store);
        assert.equal(result.claimed.length, 40);
        assert.ok(result.claimed.every((r) => r.recipient.email?.endsWith('@example.com')));
        const reads = (table: string) =>
          sent.filter((text) => new RegExp(`JOIN ${table} [a-z] ON`).test(text)).length;
        assert.equal(reads('recipients'), 1, sent.join('\n---\n'));
        assert.equal(reads('categories'), 1);
      } finally {
        await store.close();
      }
    });

    it("moves an engine turn's runs in one UPDATE, not one a run (#52)", async () => {
      const sent: string[] = [];
      const store = await open((text) => sent.push(text));
      try {
        const delayed = workflowRecord('delayed', [{ type: 'delay', for: 'PT1M' }], 1, T0);
        const definitions = new Map([[definitionKey('t1', 'delayed', 1), delayed]]);
        const runs = Array.from({ length: 30 }, (_, i) => ({ id: `run-${i}`, recipientId: `r${i}` }));
        await store.workflowRuns.trigger(newTrigger(delayed, 't1', { id: 'tr-1', createdAt: T0 }), runs, 0);
        const updates = () => sent.filter((text) => /UPDATE workflow_runs/.test(text)).length;
        sent.length = 0;
        assert.equal((await store.workflowRuns.advance(T0, 1000, definitions)).advanced, 30);
        assert.equal(updates(), 1, 'into the delay');
        sent.length = 0;
        assert.equal((await store.workflowRuns.advance(T0 + 60_000, 1000, definitions)).advanced, 30);
        assert.equal(updates(), 1, 'past it');
        const ended = await store.workflowRuns.get('t1', 'run-7');
        assert.equal(ended?.status, 'COMPLETED');
        assert.equal(ended?.dueAt, null);
      } finally {
        await store.close();
      }
    });
  });
}
