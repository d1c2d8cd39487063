import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/port/index.ts';
import { everyPriority } from '../../src/store/port/queue.ts';
import { ALL, cycle, newNotification, read, seedMany, T0 } from './queue-fixtures.ts';
import { freshStores } from './suites.ts';

/** The queue's behaviour (claim order, fencing, promotion, reaper, pauses, stats) on any adapter. */
export function queueSuite(name: string, open: () => Promise<Store>): void {
  describe(`queue store (${name})`, () => {
    const fresh = freshStores(open);

    it('claims in priority then acceptance order across channels', async () => {
      const store = await fresh();
      const ids = await seedMany(store, [
        newNotification({ channel: 'sms', priority: 'LOW' }),
        newNotification({ channel: 'email', priority: 'NORMAL' }),
        newNotification({ channel: 'push', priority: 'NORMAL' }),
        newNotification({ channel: 'sms', priority: 'CRITICAL' }),
        newNotification({ channel: 'email', priority: 'NORMAL' }),
      ]);
      const result = await cycle(store);
      assert.deepEqual(
        result.claimed.map((n) => n.id),
        [ids[3], ids[1], ids[2], ids[4], ids[0]],
      );
      assert.ok(result.claimed.every((n) => n.status === 'PROCESSING' && n.attempts === 1));
      const { events } = await read(store, ids[3] as string);
      assert.deepEqual(
        events.map((e) => [e.type, e.attempt]),
        [
          ['QUEUED', undefined],
          ['PROCESSING', 1],
        ].slice(events[0]?.type === 'QUEUED' ? 0 : 1),
      );
    });

    it('never dates a claim before the acceptance, even for a cycle that began before the row committed', async () => {
      // On PostgreSQL a cycle takes its time, then may claim what has committed since.
      const store = await fresh();
      const late = { createdAt: T0 + 1500 };
      const sent = newNotification({ priority: 'CRITICAL', ...late });
      // A person who does not exist: SKIPPED at the claim, in the same cycle.
      const nobody = newNotification({ priority: 'HIGH', ...late });
      nobody.encoded = { ...nobody.encoded, recipient: JSON.stringify({ id: 'nobody' }) };
      const [id, skipped] = await seedMany(store, [sent, nobody]);
      assert.equal((await cycle(store, { now: T0 + 1000 })).claimed.length, 1);
      for (const [which, type] of [
        [id, 'PROCESSING'],
        [skipped, 'SKIPPED'],
      ] as const) {
        const { record, events } = await read(store, which as string);
        assert.equal(events.find((e) => e.type === type)?.at, record.createdAt, type);
        assert.equal(record.updatedAt, record.createdAt, type);
      }
    });

    it('respects per-priority, shared and per-channel limits and reports what was left', async () => {
      const store = await fresh();
      await seedMany(store, [
        ...Array.from({ length: 3 }, () => newNotification({ channel: 'email', priority: 'HIGH' })),
        ...Array.from({ length: 3 }, () => newNotification({ channel: 'sms', priority: 'LOW' })),
      ]);
      // HIGH leaves rows behind for lack of budget: LOW waits (strict priority order).
      const budgetBound = await cycle(store, {
        claim: {
          perPriority: [10, 2, 10, 10],
          sharedLimit: 3,
          perChannel: everyPriority({ email: 5, sms: 5, push: 5 }),
        },
      });
      assert.deepEqual(
        budgetBound.claimed.map((n) => `${n.priority}/${n.channel}`),
        ['HIGH/email', 'HIGH/email'],
      );
      assert.deepEqual(budgetBound.backlog, [false, true, false, true]);
      // HIGH email is held by its channel's provider capacity: another channel's LOW may go.
      const channelBound = await cycle(store, {
        claim: {
          perPriority: [10, 10, 10, 10],
          sharedLimit: 10,
          perChannel: everyPriority({ email: 0, sms: 2 }),
        },
      });
      assert.deepEqual(
        channelBound.claimed.map((n) => `${n.priority}/${n.channel}`),
        ['LOW/sms', 'LOW/sms'],
      );
      assert.deepEqual(channelBound.backlog, [false, false, false, true]);
    });

    it('asks the urgent lane for a row it left that no wake-up announced, in any channel', async () => {
      const store = await fresh();
      // The lane's room is one row: each channel's first row in claim order is looked at, so the
      // sms row ready since before the last wake-up counts though an email row comes first.
      await seedMany(store, [
        newNotification({ channel: 'email', priority: 'CRITICAL', createdAt: T0 + 500 }),
        newNotification({ channel: 'sms', priority: 'CRITICAL', createdAt: T0 }),
      ]);
      const budget = { ...ALL, perPriority: [0, 100, 100, 100] };
      const late = await cycle(store, {
        claim: { ...budget, toLane: { priorities: [true, false, false, false], before: T0 + 100 } },
      });
      assert.deepEqual([late.claimed.length, late.forLane, late.backlog[0]], [0, true, true]);
      const announced = await cycle(store, {
        claim: { ...budget, toLane: { priorities: [true, false, false, false], before: T0 } },
      });
      assert.equal(announced.forLane, false);
    });

    it('applies a completion only while the lease is the same owner and attempt', async () => {
      const store = await fresh();
      const [id] = await seedMany(store, [newNotification()]);
      const [claimed] = (await cycle(store)).claimed;
      assert.ok(claimed);
      const stale = await cycle(store, {
        owner: 'w2',
        claim: undefined,
        completions: [{ seq: claimed.seq, attempt: 1, kind: 'failed', detail: 'stale worker' }],
      });
      assert.deepEqual(stale.stale, [claimed.seq]);
      const done = await cycle(store, {
        claim: undefined,
        completions: [
          {
            seq: claimed.seq,
            attempt: 1,
            kind: 'sent',
            provider: 'smtp',
            providerMessageId: 'm1',
            detail: '250 OK',
          },
        ],
      });
      assert.equal(done.applied, 1);
      const { record, events } = await read(store, id as string);
      assert.equal(record.status, 'SENT');
      assert.equal(record.providerMessageId, 'm1');
      assert.deepEqual(
        events.map((e) => e.type).filter((t) => t !== 'QUEUED'),
        ['PROCESSING', 'SENT'],
      );
    });

    it('parks a retry until due, then claims it before later notifications (FIFO kept)', async () => {
      const store = await fresh();
      const [first, second] = await seedMany(store, [newNotification(), newNotification()]);
      const claimed = (await cycle(store, { claim: { ...ALL, perPriority: [0, 0, 1, 0] } })).claimed[0];
      assert.ok(claimed);
      const retry = await cycle(store, {
        claim: undefined,
        completions: [
          { seq: claimed.seq, attempt: 1, kind: 'retry', detail: 'timeout', nextAttemptAt: T0 + 5000 },
        ],
      });
      assert.equal(retry.nextDueAt, T0 + 5000);
      assert.equal((await read(store, first as string)).record.status, 'RETRYING');
      assert.equal((await read(store, first as string)).record.nextAttemptAt, T0 + 5000);
      // Not yet due: only the second is ready. Undo it so both compete once due.
      const early = await cycle(store, { now: T0 + 2000, claim: { ...ALL, perPriority: [0, 0, 0, 0] } });
      assert.equal(early.claimed.length, 0);
      const due = await cycle(store, { now: T0 + 5000 });
      assert.equal(due.promoted, 1);
      assert.deepEqual(
        due.claimed.map((n) => n.id),
        [first, second],
      );
      assert.equal(due.claimed[0]?.attempts, 2);
      const { events } = await read(store, first as string);
      assert.deepEqual(
        events.map((e) => e.type).filter((t) => t !== 'QUEUED'),
        ['PROCESSING', 'ATTEMPT_FAILED', 'RETRYING', 'PROCESSING'],
      );
    });

    it('promotes due rows priority by priority: a CRITICAL falling due is not behind the LOW rows due before it', async () => {
      const store = await fresh();
      // 30 LOW scheduled for T0 + 100 ms, one CRITICAL for T0 + 200 ms, a HIGH for T0 + 300 ms:
      // all due at T0 + 1 s; a step promotes at most 10.
      const low = await seedMany(
        store,
        Array.from({ length: 30 }, () =>
          newNotification({ tenant: 'bulk', priority: 'LOW', scheduledAt: T0 + 100 }),
        ),
      );
      const [critical] = await seedMany(store, [
        newNotification({ priority: 'CRITICAL', scheduledAt: T0 + 200 }),
      ]);
      const [high] = await seedMany(store, [newNotification({ priority: 'HIGH', scheduledAt: T0 + 300 })]);
      const first = await cycle(store, { promoteLimit: 10 });
      assert.equal(first.promoted, 10);
      assert.deepEqual(
        first.claimed.slice(0, 2).map((n) => n.id),
        [critical, high],
      );
      // Then the LOW rows, in due (here acceptance) order, 10 a step.
      assert.deepEqual(
        first.claimed.slice(2).map((n) => n.id),
        low.slice(0, 8),
      );
      const promoted = [first.promoted];
      for (let i = 0; i < 3; i++) promoted.push((await cycle(store, { promoteLimit: 10 })).promoted);
      assert.deepEqual(promoted, [10, 10, 10, 2]);
    });

    it("promotes tenants in turns within a priority: one row due just after another tenant's many is not behind them", async () => {
      const store = await fresh();
      // Tenant `bulk` has 40 LOW due at T0 + 100 ms, `shop` one LOW due at T0 + 200 ms, `zeta`
      // one at T0 + 300 ms; a step promotes at most 10 (a turn of one row each, then due order).
      const bulk = await seedMany(
        store,
        Array.from({ length: 40 }, () =>
          newNotification({ tenant: 'bulk', priority: 'LOW', scheduledAt: T0 + 100 }),
        ),
      );
      const [shop] = await seedMany(store, [
        newNotification({ tenant: 'shop', priority: 'LOW', scheduledAt: T0 + 200 }),
      ]);
      const [zeta] = await seedMany(store, [
        newNotification({ tenant: 'zeta', priority: 'LOW', scheduledAt: T0 + 300 }),
      ]);
      const first = await cycle(store, { promoteLimit: 10 });
      assert.equal(first.promoted, 10);
      const claimed = first.claimed.map((n) => n.id);
      assert.ok(claimed.includes(shop as string), 'shop promoted in the first step');
      assert.ok(claimed.includes(zeta as string), 'zeta promoted in the first step');
      // bulk keeps its own order: its first eight.
      assert.deepEqual(
        claimed.filter((id) => id !== shop && id !== zeta),
        bulk.slice(0, 8),
      );
      // The rest of bulk, ten a step, in due order.
      const promoted = [first.promoted];
      for (let i = 0; i < 4; i++) promoted.push((await cycle(store, { promoteLimit: 10 })).promoted);
      assert.deepEqual(promoted, [10, 10, 10, 10, 2]);
    });

    it('goes round the tenants across steps, from where the last step stopped', async () => {
      const store = await fresh();
      // Twelve tenants with two LOW each, all of a00's due before a01's and so on; a step
      // promotes at most 4, so a turn is one row of each of four tenants.
      const tenants = Array.from({ length: 12 }, (_, i) => `a${String(i).padStart(2, '0')}`);
      const ids = new Map<string, string[]>();
      for (const [i, tenant] of tenants.entries()) {
        const rows = [1, 2].map((k) =>
          newNotification({ tenant, priority: 'LOW', scheduledAt: T0 + i * 10 + k }),
        );
        ids.set(tenant, await seedMany(store, rows));
      }
      const stepTenants = async () => {
        const result = await cycle(store, { promoteLimit: 4 });
        return result.claimed.map((n) => n.tenant).sort();
      };
      assert.deepEqual(await stepTenants(), ['a00', 'a01', 'a02', 'a03']);
      assert.deepEqual(await stepTenants(), ['a04', 'a05', 'a06', 'a07']);
      assert.deepEqual(await stepTenants(), ['a08', 'a09', 'a10', 'a11']);
      // Past the last tenant: the step's rows go in due order, and the next walk starts again.
      assert.deepEqual(await stepTenants(), ['a00', 'a01', 'a02', 'a03']);
      assert.deepEqual(await stepTenants(), ['a04', 'a05', 'a06', 'a07']);
      assert.deepEqual(await stepTenants(), ['a08', 'a09', 'a10', 'a11']);
      assert.equal((await cycle(store, { promoteLimit: 4 })).promoted, 0);
    });

    it('passes over tenants with nothing due without spending a turn on them', async () => {
      const store = await fresh();
      // `bulk` has 40 LOW due, a hundred tenants between it and `zeta` have one LOW each
      // scheduled for tomorrow, and `zeta` has one due. A walk visits 64 tenants with rows due,
      // so with those hundred counted as visits it would not reach `zeta` in this step.
      await seedMany(
        store,
        Array.from({ length: 40 }, () =>
          newNotification({ tenant: 'bulk', priority: 'LOW', scheduledAt: T0 + 100 }),
        ),
      );
      await seedMany(
        store,
        Array.from({ length: 100 }, (_, i) =>
          newNotification({
            tenant: `later-${String(i).padStart(3, '0')}`,
            priority: 'LOW',
            scheduledAt: T0 + 24 * 3600_000,
          }),
        ),
      );
      const [zeta] = await seedMany(store, [
        newNotification({ tenant: 'zeta', priority: 'LOW', scheduledAt: T0 + 300 }),
      ]);
      const first = await cycle(store, { promoteLimit: 10 });
      assert.equal(first.promoted, 10);
      assert.ok(
        first.claimed.some((n) => n.id === zeta),
        'zeta promoted in the first step',
      );
      assert.ok(first.claimed.every((n) => !n.tenant.startsWith('later-')));
    });

    it('gives the attempt back on a hold and writes THROTTLED once per run of holds', async () => {
      const store = await fresh();
      const [id] = await seedMany(store, [newNotification()]);
      const hold = async (now: number, repeat: boolean) => {
        const claimed = (await cycle(store, { now })).claimed[0];
        assert.ok(claimed);
        await cycle(store, {
          now,
          claim: undefined,
          completions: [
            { seq: claimed.seq, attempt: 1, kind: 'hold', detail: 'circuit open', until: now, repeat },
          ],
        });
        return claimed;
      };
      assert.equal((await hold(T0, false)).holds, 0);
      const held = await read(store, id as string);
      assert.equal(held.record.attempts, 0);
      assert.equal(held.record.holds, 1);
      assert.equal(held.events.at(-1)?.type, 'THROTTLED');
      // The next hold of the same run: counted, no second event.
      assert.equal((await hold(T0 + 10, true)).holds, 1);
      const twice = await read(store, id as string);
      assert.equal(twice.record.holds, 2);
      assert.equal(twice.events.filter((e) => e.type === 'THROTTLED').length, 1);
      // A send ends the run.
      const claimed = (await cycle(store, { now: T0 + 20 })).claimed[0];
      assert.equal(claimed?.attempts, 1);
      await cycle(store, {
        now: T0 + 20,
        claim: undefined,
        completions: [{ seq: claimed?.seq as number, attempt: 1, kind: 'sent', provider: 'p' }],
      });
      assert.equal((await read(store, id as string)).record.holds, 0);
    });

    it('marks a notification past expiresAt EXPIRED instead of claiming it', async () => {
      const store = await fresh();
      const [id] = await seedMany(store, [newNotification({ expiresAt: T0 + 500 })]);
      const result = await cycle(store);
      assert.equal(result.claimed.length, 0);
      assert.equal(result.expired, 1);
      const { record, events } = await read(store, id as string);
      assert.equal(record.status, 'EXPIRED');
      assert.equal(events.at(-1)?.type, 'EXPIRED');
    });

    it("gives an expired row's slot to the next row: expiring calls no provider", async () => {
      const store = await fresh();
      const [first, second, live] = await seedMany(store, [
        newNotification({ expiresAt: T0 + 500 }),
        newNotification({ expiresAt: T0 + 600 }),
        newNotification(),
      ]);
      // One NORMAL in the step's budget, and one email in the provider's room.
      const byLimit = await cycle(store, { claim: { ...ALL, perPriority: [0, 0, 1, 0] } });
      assert.equal(byLimit.expired, 2);
      assert.deepEqual(
        byLimit.claimed.map((n) => n.id),
        [live],
      );
      assert.equal((await read(store, first as string)).record.status, 'EXPIRED');
      assert.equal((await read(store, second as string)).record.status, 'EXPIRED');

      const other = await fresh();
      const [, , kept] = await seedMany(other, [
        newNotification({ expiresAt: T0 + 500 }),
        newNotification({ expiresAt: T0 + 600 }),
        newNotification(),
      ]);
      const byChannel = await cycle(other, { claim: { ...ALL, perChannel: everyPriority({ email: 1 }) } });
      assert.deepEqual(
        byChannel.claimed.map((n) => n.id),
        [kept],
      );
    });

    it('returns expired leases to the queue, and fails them when attempts are used up', async () => {
      const store = await fresh();
      const [a, b] = await seedMany(store, [newNotification(), newNotification()]);
      await cycle(store, { maxAttempts: 1 });
      const reaped = await cycle(store, { owner: 'w2', now: T0 + 40_000, maxAttempts: 2, claim: undefined });
      assert.equal(reaped.reaped, 2);
      const ra = await read(store, a as string);
      assert.equal(ra.record.status, 'RETRYING');
      assert.match(ra.events.find((e) => e.type === 'ATTEMPT_FAILED')?.detail ?? '', /lease expired/);
      // Second round: attempts 2 of 2 are exhausted when this lease expires too.
      await cycle(store, { owner: 'w2', now: T0 + 41_000, leaseUntil: T0 + 42_000, maxAttempts: 2 });
      await cycle(store, { owner: 'w3', now: T0 + 50_000, maxAttempts: 2, claim: undefined });
      assert.equal((await read(store, b as string)).record.status, 'FAILED');
    });

    it('renews only leases still held by the owner', async () => {
      const store = await fresh();
      await seedMany(store, [newNotification()]);
      const claimed = (await cycle(store)).claimed[0];
      assert.ok(claimed);
      assert.equal(await store.queue.renew('w2', [{ seq: claimed.seq, attempt: 1 }], T0 + 90_000), 0);
      assert.equal(await store.queue.renew('w1', [{ seq: claimed.seq, attempt: 1 }], T0 + 90_000), 1);
      const reap = await cycle(store, { owner: 'w2', now: T0 + 60_000, claim: undefined });
      assert.equal(reap.reaped, 0);
    });

    it('skips paused queues and marks the held notifications THROTTLED when claimed after resume', async () => {
      const store = await fresh();
      await store.queue.setPaused({ priority: 3 }, true, T0);
      const [low, normal] = await seedMany(store, [
        newNotification({ priority: 'LOW', createdAt: T0 + 10 }),
        newNotification({ priority: 'NORMAL', createdAt: T0 + 10 }),
      ]);
      const paused = await cycle(store);
      assert.deepEqual(
        paused.claimed.map((n) => n.id),
        [normal],
      );
      const stats = await store.queue.stats();
      assert.equal(stats.filter((s) => s.paused).length, 4);
      await store.queue.setPaused({}, false, T0 + 2000);
      const resumed = await cycle(store, { now: T0 + 3000 });
      assert.deepEqual(
        resumed.claimed.map((n) => n.id),
        [low],
      );
      const types = (await read(store, low as string)).events.map((e) => e.type);
      assert.deepEqual(
        types.filter((t) => t !== 'QUEUED'),
        ['THROTTLED', 'PROCESSING'],
      );
    });

    it('dates the THROTTLED event of a held notification when the pause began for it, once', async () => {
      const store = await fresh();
      await store.queue.setPaused({ channel: 'sms' }, true, T0);
      const [id] = await seedMany(store, [newNotification({ channel: 'sms', createdAt: T0 + 5 })]);
      assert.equal((await cycle(store, { now: T0 + 50 })).claimed.length, 0);
      await store.queue.setPaused({ channel: 'sms' }, false, T0 + 100);
      await cycle(store, { now: T0 + 200 });
      const throttled = (await read(store, id as string)).events.filter((e) => e.type === 'THROTTLED');
      assert.equal(throttled.length, 1);
      assert.equal(throttled[0]?.at, T0 + 5, 'accepted after the pause began: dated at acceptance');
    });

    it('reports 16 queues with depth, oldest, in-flight and paused', async () => {
      const store = await fresh();
      const stats0 = await store.queue.stats();
      assert.equal(stats0.length, 16);
      assert.ok(
        stats0.every((s) => s.depth === 0 && s.oldestCreatedAt === null && s.inFlight === 0 && !s.paused),
      );
      await seedMany(store, [
        newNotification({ channel: 'sms', priority: 'HIGH', createdAt: T0 + 1 }),
        newNotification({ channel: 'sms', priority: 'HIGH', createdAt: T0 + 2, scheduledAt: T0 + 99_000 }),
        newNotification({ channel: 'push', priority: 'LOW', createdAt: T0 + 3 }),
      ]);
      await cycle(store, { claim: { ...ALL, perChannel: everyPriority({ push: 5 }) } });
      await store.queue.setPaused({ priority: 0, channel: 'email' }, true, T0);
      // At T0 + 10 the one scheduled for T0 + 99 s is not due: counted apart, not the oldest due.
      const stats = await store.queue.stats(undefined, T0 + 10);
      const cell = (p: number, c: string) => stats.find((s) => s.priority === p && s.channel === c);
      assert.deepEqual(cell(1, 'sms'), {
        priority: 1,
        channel: 'sms',
        depth: 2,
        oldestCreatedAt: T0 + 1,
        scheduled: 1,
        oldestDueCreatedAt: T0 + 1,
        inFlight: 0,
        paused: false,
      });
      const later = await store.queue.stats(undefined, T0 + 100_000);
      assert.equal(later.find((s) => s.priority === 1 && s.channel === 'sms')?.scheduled, 0);
      assert.deepEqual(cell(3, 'push'), {
        priority: 3,
        channel: 'push',
        depth: 0,
        oldestCreatedAt: null,
        scheduled: 0,
        oldestDueCreatedAt: null,
        inFlight: 1,
        paused: false,
      });
      assert.equal(cell(0, 'email')?.paused, true);
    });

    it("counts one tenant's rows only when asked for that tenant, pauses included", async () => {
      const store = await fresh();
      await seedMany(store, [
        newNotification({ channel: 'email', priority: 'LOW', createdAt: T0 + 1 }),
        newNotification({ tenant: 't2', channel: 'email', priority: 'LOW', createdAt: T0 + 2 }),
        newNotification({ tenant: 't2', channel: 'email', priority: 'LOW', createdAt: T0 + 3 }),
        newNotification({ channel: 'sms', priority: 'LOW', createdAt: T0 + 4, scheduledAt: T0 + 99_000 }),
        newNotification({
          tenant: 't2',
          channel: 'sms',
          priority: 'LOW',
          createdAt: T0 + 5,
          scheduledAt: T0 + 99_000,
        }),
        newNotification({ tenant: 't2', channel: 'push', priority: 'HIGH', createdAt: T0 + 6 }),
      ]);
      // Leases t2's HIGH push only (no LOW may be claimed).
      await cycle(store, { claim: { ...ALL, perPriority: [100, 100, 100, 0] } });
      await store.queue.setPaused({ priority: 3 }, true, T0);
      const view = async (tenant?: string) => {
        const rows = await store.queue.stats(tenant);
        return rows
          .filter((s) => s.depth > 0 || s.inFlight > 0 || s.paused)
          .map((s) => `${s.priority}/${s.channel} ${s.depth} ${s.oldestCreatedAt} ${s.inFlight} ${s.paused}`);
      };
      assert.deepEqual(await view(), [
        `1/push 0 null 1 false`,
        `3/email 3 ${T0 + 1} 0 true`,
        `3/sms 2 ${T0 + 4} 0 true`,
        '3/push 0 null 0 true',
        '3/inapp 0 null 0 true',
      ]);
      assert.deepEqual(await view('t1'), [
        `3/email 1 ${T0 + 1} 0 true`,
        `3/sms 1 ${T0 + 4} 0 true`,
        '3/push 0 null 0 true',
        '3/inapp 0 null 0 true',
      ]);
      assert.deepEqual(await view('t2'), [
        `1/push 0 null 1 false`,
        `3/email 2 ${T0 + 2} 0 true`,
        `3/sms 1 ${T0 + 5} 0 true`,
        '3/push 0 null 0 true',
        '3/inapp 0 null 0 true',
      ]);
      assert.deepEqual(await view('t3'), [
        '3/email 0 null 0 true',
        '3/sms 0 null 0 true',
        '3/push 0 null 0 true',
        '3/inapp 0 null 0 true',
      ]);
    });
  });
}
