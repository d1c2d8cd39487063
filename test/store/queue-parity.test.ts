// The queue's rules must not drift between the databases (docs/decisions/0008-one-queue-rule-for-both-databases.md): the same
// random operations (inserts across tenants, priorities and channels, scheduled and expiring
// rows, claims with tight budgets, completions of every kind, stale ones, reaped leases, cancels,
// redrives, pauses, suppressions, notifications to people with and without a profile, an address
// or an opt-out) go through a SQLite store and a PostgreSQL store step by step,
// and after each step the two must agree on what the step answered, every row's queue state and
// every event written. A seeded PRNG drives it: HERALD_PARITY_SEED picks another seed,
// HERALD_PARITY_STEPS another length; a failure names the seed and the step.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Channel, Priority, Recipient } from '../../src/notifications/model.ts';
import type { Completion } from '../../src/notifications/status.ts';
import type { ClaimBudget, CycleInput, CycleResult } from '../../src/store/port/queue.ts';
import { createPostgresStore } from '../../src/store/postgres/index.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { suppressionKey } from '../../src/suppressions/model.ts';
import { tempDir } from '../helpers/config.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';
import { newNotification, T0 } from './queue-fixtures.ts';

const DEFAULT_SEED = 20261128;
const SEED = Number(process.env.HERALD_PARITY_SEED ?? DEFAULT_SEED);
const STEPS = Number(process.env.HERALD_PARITY_STEPS ?? 400);

/** mulberry32: a small seeded PRNG, so that a failing run can be replayed from its seed. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return {
    int,
    chance: (p: number) => next() < p,
    pick: <T>(items: readonly T[]): T => items[int(items.length)] as T,
  };
}

const TENANTS = ['ta', 'tb', 'tc'];
const PRIORITIES: Priority[] = ['CRITICAL', 'HIGH', 'NORMAL', 'LOW'];
const CHANNELS: Channel[] = ['email', 'sms', 'push', 'inapp'];
/**
 * Two addresses a channel, so that a suppression stops some rows and not others; and three
 * people (`{ id }`, resolved in the claim): `ada` has the first address of every channel (so an
 * address's suppression stops her too), `cy` no sms address and an opt-out of `news` on email,
 * and `gone` has no profile (SKIPPED, as a recipient deleted after acceptance); `inapp` names
 * only people.
 */
const RECIPIENTS: Record<Channel, Recipient[]> = {
  email: [
    { email: 'ada@example.com' },
    { email: 'bob@example.com' },
    { id: 'ada' },
    { id: 'cy' },
    { id: 'gone' },
  ],
  sms: [{ phone: '+15550000001' }, { phone: '+15550000002' }, { id: 'ada' }, { id: 'cy' }, { id: 'gone' }],
  push: [
    { deviceToken: 'a'.repeat(64), platform: 'apns' as const },
    { deviceToken: 'b'.repeat(64), platform: 'apns' as const },
    { id: 'ada' },
    { id: 'cy' },
    { id: 'gone' },
  ],
  inapp: [{ id: 'ada' }, { id: 'cy' }, { id: 'gone' }, { id: 'ada' }, { id: 'cy' }],
};
const PEOPLE = [
  {
    id: 'ada',
    profile: { email: 'ada@example.com', phone: '+15550000001', push: [RECIPIENTS.push[0] as Recipient] },
  },
  { id: 'cy', profile: { email: 'cy@example.com', push: [RECIPIENTS.push[1] as Recipient] } },
];
const CY_PREFERENCES = { channels: {}, categories: { news: { email: false } } };

const recipientOf = (m: { channel: Channel; recipient: number }) =>
  RECIPIENTS[m.channel][m.recipient] as Recipient;

/** The suppression key of the address a row goes to: a person's profile address on its channel. */
function addressKeyOf(m: { channel: Channel; recipient: number }): string | undefined {
  const recipient = recipientOf(m);
  if (recipient.id === undefined) return suppressionKey(recipient);
  const profile = PEOPLE.find((p) => p.id === recipient.id)?.profile as Record<string, unknown> | undefined;
  if (m.channel === 'email' && typeof profile?.email === 'string') return profile.email;
  if (m.channel === 'sms' && typeof profile?.phone === 'string') return profile.phone;
  const [target] = (profile?.push ?? []) as Recipient[];
  return m.channel === 'push' && target ? suppressionKey(target) : undefined;
}

/** A notification the test made: what a completion or an action on it needs. */
interface Made {
  id: string;
  tenant: string;
  channel: Channel;
  recipient: number;
  category: string | null;
}

/** A lease a claim gave: the owner and attempt its completion is fenced by. */
interface Lease {
  id: string;
  owner: string;
  attempt: number;
}

/** One step, as data, so that a failure can say what it was. */
type Step =
  | {
      op: 'insert';
      rows: Array<Made & { priority: Priority; scheduledAt: number | null; expiresAt: number | null }>;
      /**
       * When the rows were accepted: the step's time, or a millisecond after it for every fourth
       * insert, so that a cycle at the step's time claims rows accepted after it began, as a
       * PostgreSQL cycle may, and dates them from their acceptance (status.ts claimTime). Never
       * before an earlier insert's, as acceptance follows seq.
       */
      createdAt: number;
    }
  | { op: 'tick'; ms: number }
  | { op: 'cycle'; input: Omit<CycleInput, 'completions'>; completions: Array<Lease & { c: Completion }> }
  | { op: 'cancel' | 'redrive'; tenant: string; id: string }
  | { op: 'pause'; priority?: number; channel?: Channel; paused: boolean };

type Sqlite = ReturnType<typeof createSqliteStore>;
type Postgres = Awaited<ReturnType<typeof createPostgresStore>>;

/** Everything a store may differ in only by its own numbering (seq, event ids), read as plain rows. */
interface Seen {
  answer: unknown;
  rows: unknown[];
  events: unknown[];
  stats: unknown;
  /** The delivery history's minute buckets (counted in the cycle, pruned past the hour). */
  outcomes: unknown[];
}

const ROW_COLUMNS = `id, status, queue_state, due_at, attempts, holds, lane_rank, next_attempt_at, lease_owner,
  lease_until, provider, provider_message_id, address_key, updated_at`;
const EVENT_COLUMNS = 'n.id AS nid, e.type, e.at, e.attempt, e.provider, e.detail, e.source';

/** Drives one store and reads back what it did; `seqs` maps its own seqs to the test's ids. */
function driver(name: string, store: Sqlite | Postgres) {
  const seqs = new Map<number, string>();
  const ids = new Map<string, number>();
  let lastEvent = 0;
  const query = async (text: string): Promise<Array<Record<string, unknown>>> =>
    'db' in store
      ? (store.db.prepare(text).all() as Array<Record<string, unknown>>)
      : [...(await store.sql.unsafe(text))];
  const rows = () => query(`SELECT ${ROW_COLUMNS} FROM notifications ORDER BY id`);
  const newEvents = async () => {
    const found = await query(`SELECT e.id AS eid, ${EVENT_COLUMNS} FROM notification_events e
      JOIN notifications n ON n.seq = e.notification_seq WHERE e.id > ${lastEvent} ORDER BY e.id`);
    const last = found.at(-1);
    if (last) lastEvent = Number(last.eid);
    return found.map(({ eid: _, ...event }) => event);
  };
  const learnSeqs = async () => {
    for (const row of await query('SELECT seq, id FROM notifications')) {
      seqs.set(Number(row.seq), String(row.id));
      ids.set(String(row.id), Number(row.seq));
    }
  };
  const plain = (result: CycleResult) => ({
    ...result,
    claimed: result.claimed.map(({ seq: _, ...record }) => record),
    stale: result.stale.map((seq) => seqs.get(seq)),
  });

  async function apply(step: Step, now: number): Promise<unknown> {
    switch (step.op) {
      case 'insert':
        await store.notifications.insertMany(
          step.rows.map((r) =>
            newNotification({
              id: r.id,
              tenant: r.tenant,
              channel: r.channel,
              priority: r.priority,
              recipient: recipientOf(r),
              category: r.category,
              scheduledAt: r.scheduledAt,
              expiresAt: r.expiresAt,
              createdAt: step.createdAt,
            }),
          ),
          0,
        );
        await learnSeqs();
        return null;
      case 'tick':
        return null;
      case 'cycle': {
        const completions = step.completions.map(({ id, c }) => ({ ...c, seq: ids.get(id) as number }));
        return plain(await store.queue.cycle({ ...step.input, completions }));
      }
      case 'cancel':
        return store.notifications.cancel(step.tenant, step.id, now);
      case 'redrive':
        return store.notifications.redrive(step.tenant, step.id, now);
      case 'pause':
        await store.queue.setPaused({ priority: step.priority, channel: step.channel }, step.paused, now);
        return null;
    }
  }

  return {
    name,
    async step(step: Step, now: number): Promise<Seen> {
      const answer = await apply(step, now);
      return {
        answer,
        rows: await rows(),
        events: await newEvents(),
        stats: await store.queue.stats(),
        outcomes: await store.outcomes.read({ spanMs: 60_000, since: 0 }),
      };
    },
  };
}

/** The next step, chosen from what the test knows of the queue (the stores agree on it so far). */
function planner(seed: number) {
  const rnd = prng(seed);
  const made: Made[] = [];
  let leases: Lease[] = [];
  let counter = 0;
  let inserts = 0;
  let accepted = 0;
  let completionId = 0;
  // Times on a coarse grid, so that due times, expiries and leases often tie.
  const later = (now: number) => now + 250 * (1 + rnd.int(12));

  // A third of the claims leave CRITICAL and HIGH to an urgent lane (a PostgreSQL worker's steps):
  // they count those rows, lock none, and say whether the lane must claim (`forLane`).
  const budget = (now: number): ClaimBudget => ({
    perPriority: PRIORITIES.map(() => rnd.int(5)),
    sharedLimit: rnd.int(7),
    perChannel: PRIORITIES.map(() => ({
      email: rnd.int(4),
      sms: rnd.int(4),
      push: rnd.int(4),
      inapp: rnd.int(4),
    })),
    ...(rnd.chance(0.3)
      ? { toLane: { priorities: [true, true, false, false], before: now - rnd.pick([0, 250, 1000]) } }
      : {}),
  });

  const completion = (lease: Lease, now: number): Completion => {
    const base = { seq: 0, attempt: rnd.chance(0.1) ? lease.attempt + 1 : lease.attempt };
    const made1 = made.find((m) => m.id === lease.id) as Made;
    switch (rnd.int(6)) {
      case 0: {
        const person = recipientOf(made1).id !== undefined;
        return {
          ...base,
          kind: 'sent',
          provider: 'p1',
          providerMessageId: `m${completionId++}`,
          detail: '250 OK',
          ...(person ? { addressKey: addressKeyOf(made1) } : {}),
        };
      }
      case 1:
        return { ...base, kind: 'delivered', provider: 'p1' };
      case 2:
        return { ...base, kind: 'retry', provider: 'p1', detail: 'timeout', nextAttemptAt: later(now) };
      case 3: {
        const recipient = addressKeyOf(made1) as string;
        const suppress =
          rnd.chance(0.5) && recipient !== undefined
            ? { tenant: made1.tenant, channel: made1.channel, recipient, reason: 'bounce' as const }
            : undefined;
        return { ...base, kind: 'failed', provider: 'p1', detail: 'rejected', suppress };
      }
      case 4:
        return {
          ...base,
          kind: 'hold',
          provider: 'p1',
          detail: 'circuit open',
          until: rnd.chance(0.5) ? now : later(now),
          repeat: rnd.chance(0.3),
        };
      default:
        return { ...base, kind: 'retry', detail: 'no provider', nextAttemptAt: now };
    }
  };

  return {
    next(now: number): Step {
      const roll = rnd.int(100);
      if (roll < 22 || made.length === 0) {
        const rows = Array.from({ length: 1 + rnd.int(4) }, () => ({
          id: `n${String(counter++).padStart(4, '0')}`,
          tenant: rnd.pick(TENANTS),
          channel: rnd.pick(CHANNELS),
          recipient: rnd.int(5),
          category: rnd.chance(0.3) ? 'news' : null,
          priority: rnd.pick(PRIORITIES),
          scheduledAt: rnd.chance(0.25) ? later(now) : null,
          expiresAt: rnd.chance(0.25) ? later(now) : null,
        }));
        made.push(...rows);
        // Every fourth insert, counted, not drawn: the plan's random choices stay its seed's.
        accepted = Math.max(accepted, ++inserts % 4 === 0 ? now + 1 : now);
        return { op: 'insert', rows, createdAt: accepted };
      }
      if (roll < 35) return { op: 'tick', ms: rnd.pick([0, 250, 500, 1000, 3000, 10_000]) };
      if (roll < 80) {
        const owner = rnd.pick(['w1', 'w2']);
        const mine = leases.filter((l) => l.owner === owner || rnd.chance(0.05));
        const chosen = mine.filter(() => rnd.chance(0.6));
        const chosenIds = new Set(chosen.map((l) => l.id));
        leases = leases.filter((l) => !chosenIds.has(l.id));
        return {
          op: 'cycle',
          input: {
            owner,
            now,
            leaseUntil: now + rnd.pick([1000, 2500, 30_000]),
            maxAttempts: 3,
            claim: rnd.chance(0.85) ? budget(now) : undefined,
            promoteLimit: rnd.pick([1, 2, 3, 1000]),
            reapLimit: rnd.pick([1, 1000]),
          },
          completions: chosen.map((lease) => ({ ...lease, c: completion(lease, now) })),
        };
      }
      if (roll < 88) {
        const target = rnd.pick(made);
        return { op: 'cancel', tenant: rnd.chance(0.9) ? target.tenant : 'tz', id: target.id };
      }
      if (roll < 94) {
        const target = rnd.pick(made);
        return { op: 'redrive', tenant: target.tenant, id: target.id };
      }
      return {
        op: 'pause',
        priority: rnd.chance(0.6) ? rnd.int(4) : undefined,
        channel: rnd.chance(0.6) ? rnd.pick(CHANNELS) : undefined,
        paused: rnd.chance(0.6),
      };
    },
    /** What a cycle leased (the stores agreed on it): its completions come in later cycles. */
    leased(owner: string, claimed: ReadonlyArray<{ id: string; attempts: number }>) {
      const ids = new Set(claimed.map((c) => c.id));
      leases = leases.filter((l) => !ids.has(l.id));
      for (const c of claimed) leases.push({ id: c.id, owner, attempt: c.attempts });
    },
  };
}

/** The first place where two plain values differ, as one line; undefined when they are equal. */
function difference(lite: unknown, pg: unknown, path: string): string | undefined {
  if (typeof lite === 'object' && lite !== null && typeof pg === 'object' && pg !== null) {
    const keys = new Set([...Object.keys(lite), ...Object.keys(pg)]);
    for (const key of keys) {
      const found = difference(
        (lite as Record<string, unknown>)[key],
        (pg as Record<string, unknown>)[key],
        `${path}.${key}`,
      );
      if (found) return found;
    }
    return undefined;
  }
  if (Object.is(lite, pg)) return undefined;
  return `${path}: sqlite ${JSON.stringify(lite)}, postgres ${JSON.stringify(pg)}`;
}

describe('the queue on SQLite and PostgreSQL', () => {
  let sqlite: Sqlite;
  let postgres: Postgres;
  before(async () => {
    sqlite = createSqliteStore(tempDir());
    const server = await sharedPostgres();
    postgres = await createPostgresStore(await server.createDatabase('herald_parity'), { max: 2 });
    for (const store of [sqlite, postgres]) {
      for (const tenant of TENANTS) {
        await store.recipients.put(tenant, PEOPLE, T0);
        await store.recipients.setPreferences(tenant, 'cy', CY_PREFERENCES, T0);
      }
    }
  });
  after(async () => {
    await sqlite?.close();
    await postgres?.close();
    await stopSharedPostgres();
  });

  it('makes the same claims, row changes and events for the same random operations', async () => {
    const started = performance.now();
    const plan = planner(SEED);
    const stores = [driver('sqlite', sqlite), driver('postgres', postgres)] as const;
    let now = T0;
    // What the run went through, so that a change of the plan that stops covering people shows.
    const seenSkips = new Set<string>();
    let sentToPeople = 0;
    for (let i = 0; i < STEPS; i++) {
      const step = plan.next(now);
      if (step.op === 'tick') now += step.ms;
      const [lite, pg] = [await stores[0].step(step, now), await stores[1].step(step, now)];
      const where = `seed ${SEED}, step ${i}: ${JSON.stringify(step)}`;
      for (const part of ['answer', 'rows', 'events', 'stats', 'outcomes'] as const) {
        const differs = difference(lite[part], pg[part], part);
        if (differs) assert.fail(`${differs}\n  at ${where}`);
      }
      for (const e of lite.events as Array<{ type: string; detail: string | null }>)
        if (e.type === 'SKIPPED') seenSkips.add(String(e.detail));
      sentToPeople = (lite.rows as Array<{ address_key: string | null }>).filter((r) => r.address_key).length;
      if (step.op === 'cycle') {
        const answer = lite.answer as { claimed: Array<{ id: string; attempts: number }> };
        plan.leased(step.input.owner, answer.claimed);
      }
    }
    // The default plan's coverage; another seed replays a failure and may cover less.
    if (SEED === DEFAULT_SEED && STEPS >= 400) {
      assert.deepEqual([...seenSkips].sort(), [
        'no sms address',
        'opted out of news on email',
        'recipient deleted',
      ]);
      assert.ok(sentToPeople > 0, 'some notifications to people were sent');
    }
    console.log(`queue parity: ${STEPS} steps, seed ${SEED}, ${Math.round(performance.now() - started)} ms`);
  });
});
