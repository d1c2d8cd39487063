import {
  CHANNELS,
  type Channel,
  type NotificationRecord,
  PRIORITIES,
  type Recipient,
} from '../notifications/model.ts';
import {
  claimTime,
  type EventInput,
  type ExpiredLease,
  effectOf,
  type GoneTargets,
  type InboxEntry,
  type PauseEntry,
  pauseEvent,
  processingEvent,
  reapEffect,
  type SandboxCopy,
  skippedEffect,
  suppressedEffect,
  type Transition,
} from '../notifications/status.ts';
import type { CategoryRecord, RecipientRecord } from '../recipients/model.ts';
import { resolve } from '../recipients/resolve.ts';
import { blocks, type Suppression, type SuppressionRecord, suppressionKey } from '../suppressions/model.ts';
import type { OutcomeCount } from './port/outcome-counts.ts';
import type { ClaimBudget, CycleInput, CycleResult, QueueSelector, QueueStat } from './port/queue.ts';
import { type RecipientKey, recipientKeyText } from './port/recipients.ts';
import { keyText, type SuppressionKey } from './port/suppressions.ts';

/**
 * The queue's policy, written once for both databases: the order of a cycle's phases, the
 * strict-priority claim loop with its budget, pause bookkeeping, and the 16-cell stats grid.
 * Each adapter supplies only a QueueDriver: a handful of primitives, each one SQL operation
 * (set-based where the database allows), applied inside the cycle's transaction.
 *
 * better-sqlite3 transactions are synchronous and postgres.js ones are async, so the policy is a
 * generator that yields driver calls: runSync() answers them at once inside a SQLite
 * transaction (no await, so no other statement can interleave on the one connection), and
 * runAsync() awaits them inside a PostgreSQL one. Same code, same decisions, two drivers.
 */

export type Awaitable<T> = T | Promise<T>;

/** A leased row as a transition left it: what the sandbox copy and follow-ups need. */
export interface AppliedRow {
  seq: number;
  id: string;
  tenant: string;
  channel: Channel;
}

/** One claimed row, with its updated_at from before the claim (pause bookkeeping needs it). */
export interface ClaimedRow {
  record: NotificationRecord;
  touchedAt: number;
}

/** What one claimPriority call did. */
export interface PriorityClaim {
  claimed: ClaimedRow[];
  /** Seqs of the picked rows found expired, in claim order; the driver made them EXPIRED. */
  expired: number[];
  /** Ready rows of this priority were left behind (for lack of budget or channel room). */
  backlog: boolean;
  /** The recent pauses, newest first, when the claim was asked for them (claimPriority). */
  pauses?: PauseEntry[];
  /**
   * With the pauses, where the driver tells it in the claim's statement: whether each priority
   * (by rank) had any ready row then. A priority with none is not claimed in this cycle.
   */
  anyReady?: boolean[];
}

/** A sandbox copy to store, with the row it belongs to. */
export interface CopyRow extends SandboxCopy, AppliedRow {
  attempt: number;
}

/** An inbox message to store, with the row it belongs to. */
export interface InboxEntryRow extends InboxEntry {
  seq: number;
  id: string;
  tenant: string;
}

/** One (priority, channel, queue state) group of the queue, as stats() counts it. */
export interface QueueGroup {
  priority: number;
  channel: string;
  /** `scheduled`: waiting rows not due yet (a later scheduledAt or retry); `waiting`: due ones. */
  state: 'ready' | 'waiting' | 'scheduled' | 'leased';
  n: number;
  /** created_at of the oldest row of the group (not needed for leased groups). */
  oldest: number | null;
}

/** The database primitives a queue adapter supplies. Each runs inside the caller's transaction. */
export interface QueueDriver {
  /**
   * Applies each transition to its row if the row is still leased by the transition's owner at
   * its attempt (the fence); returns the rows it changed. A stale fence changes nothing.
   */
  transition(transitions: readonly Transition[], now: number): Awaitable<AppliedRow[]>;
  /** Appends events in list order (ids follow it, so SENT precedes DELIVERED). */
  appendEvents(events: readonly EventInput[], now: number): Awaitable<void>;
  /** Stores the sandbox's copies of delivered messages. */
  storeCopies(copies: readonly CopyRow[], now: number): Awaitable<void>;
  /** Stores `inapp` messages in their recipients' inboxes (docs/inbox.md). */
  storeInbox(entries: readonly InboxEntryRow[], now: number): Awaitable<void>;
  /** Adds (or widens) suppressions, by the rule of the suppression port. */
  suppress(entries: readonly Suppression[], now: number): Awaitable<void>;
  /**
   * Adds a cycle's outcomes to the delivery history's buckets at `now` (one row per key and
   * span, however many notifications it counts), and now and then prunes the buckets past
   * their window (notifications/outcomes.ts).
   */
  countOutcomes(counts: readonly OutcomeCount[], now: number): Awaitable<void>;
  /** The suppressions among these keys: one statement for a whole claim. */
  suppressions(keys: readonly SuppressionKey[]): Awaitable<SuppressionRecord[]>;
  /** The recipients among these keys (a claim's people): one statement for a whole claim. */
  recipients(keys: readonly RecipientKey[]): Awaitable<RecipientRecord[]>;
  /** The declared categories among these: one statement for a whole claim. */
  categories(keys: ReadonlyArray<{ tenant: string; name: string }>): Awaitable<CategoryRecord[]>;
  /** Removes gone push targets from their profiles, with the completion that found them gone (dispatch/deliver-targets.ts). */
  dropPushTargets(gone: readonly GoneTargets[], now: number): Awaitable<void>;
  /**
   * How many waiting rows of each priority (index = rank) are due by `now`, counting up to `upTo`
   * of each at most: one read for the four (a statement each was three round trips more a step).
   */
  dueCounts(now: number, upTo: number): Awaitable<number[]>;
  /**
   * One turn of promotion by tenant in one priority (see promote): looks at most at `looks`
   * tenants with waiting rows of that priority, in tenant order after `after`, passing over those
   * with none due, and visits at most `visits` of those with some: it moves up to `quota` of
   * each one's due rows back to ready (in due order, keeping their seq), `limit` in all. Answers
   * how many it moved and the last tenant it looked at, or `last: null` when it went past the
   * last tenant.
   */
  promoteTurn(
    priority: number,
    now: number,
    turn: PromotionTurn,
  ): Awaitable<{ promoted: number; last: string | null }>;
  /**
   * Up to `limit` due waiting rows of one priority back to ready, in (due_at, seq) order, keeping
   * their seq.
   */
  promoteDue(priority: number, now: number, limit: number): Awaitable<number>;
  /** Leases that ran out before `now`, oldest first, at most `limit` (locked for this transaction). */
  expiredLeases(now: number, limit: number): Awaitable<ExpiredLease[]>;
  /**
   * Picks up to `limit` ready rows of one priority, at most `caps[channel]` of each channel, by
   * the claim order (each channel's rows by (lane_rank, seq), the channels merged by seq: always
   * the smallest seq among the channels' next rows). Of the picked rows, those past their
   * expiresAt become EXPIRED (expiredChange) and the others are leased to `owner` until
   * `leaseUntil` (leaseChange). An expired row takes its place in the pick like any other: the
   * core asks again for the room it gave back (claimInOrder). `backlog`: ready rows were left
   * beyond the pick; a driver reads headsToRead rows of each channel to tell. With `pauseHistory`
   * above 0 the claim also answers that many of the recent pauses (`pauses`, as pauses() reads
   * them) and reads no row of a channel paused now in this priority, whatever `caps` says: a
   * cycle's first claim reads the pauses it needs itself, in the same statement on PostgreSQL,
   * which also answers `anyReady` (no claim of a priority with nothing ready: one wait fewer).
   */
  claimPriority(
    owner: string,
    now: number,
    leaseUntil: number,
    priority: number,
    limit: number,
    caps: Record<Channel, number>,
    pauseHistory?: number,
  ): Awaitable<PriorityClaim>;
  /**
   * How many ready rows of one priority wait in these channels, counting up to `upTo` in each
   * channel, without locking any, and how many of those have been ready since before `before`
   * (their updated_at): a claim that leaves the priority to the urgent lane (ClaimBudget.toLane).
   * Both counts read the same rows on either database: each channel's first `upTo` in claim order
   * (lane_rank, seq), an ordered read of the ready index. The caller compares `ready` with its
   * limit, so a sum over channels above `upTo` needs no cap.
   */
  readyCount(
    priority: number,
    channels: readonly Channel[],
    upTo: number,
    before: number,
  ): Awaitable<{ ready: number; waited: number }>;
  /** Recent pauses, newest first (the table holds a few rows). */
  pauses(limit: number): Awaitable<PauseEntry[]>;
  /** Whether this notification has a THROTTLED event at or after `since`. */
  hasThrottled(seq: number, since: number): Awaitable<boolean>;
  /** The earliest due_at among waiting rows. */
  nextDueAt(): Awaitable<number | null>;
}

type Op = (driver: QueueDriver) => unknown;
/** A piece of queue policy: yields driver calls, returns its result. */
export type Program<T> = Generator<Op, T, unknown>;

function* call<T>(op: (driver: QueueDriver) => Awaitable<T>): Program<T> {
  return (yield op) as T;
}

/** Runs a program on a synchronous driver (SQLite, inside db.transaction). */
export function runSync<T, D = QueueDriver>(
  program: Generator<(driver: D) => unknown, T, unknown>,
  driver: D,
): T {
  let step = program.next();
  while (!step.done) {
    const value = step.value(driver);
    if (value instanceof Promise) throw new TypeError('a synchronous queue driver returned a promise');
    step = program.next(value);
  }
  return step.value;
}

/** Runs a program on an asynchronous driver (PostgreSQL, inside sql.begin). */
export async function runAsync<T, D = QueueDriver>(
  program: Generator<(driver: D) => unknown, T, unknown>,
  driver: D,
): Promise<T> {
  let step = program.next();
  while (!step.done) step = program.next(await step.value(driver));
  return step.value;
}

/** How many recent pauses a claim reads: enough to find the one that held any waiting row. */
export const PAUSE_HISTORY = 200;

/** Active pauses and recent history, read once per claim. */
interface PauseView {
  isPaused(priority: number, channel: string): boolean;
  /**
   * The ended pause that held back a notification of this cell created at `createdAt` and last
   * touched at `updatedAt`: one that ended after both (so it was waiting while paused). A row
   * scheduled past the resume also counts (it sat in a paused queue, though not yet due).
   */
  heldBy(priority: number, channel: string, createdAt: number, updatedAt: number): PauseEntry | undefined;
}

/** `caps` with no room in the channels paused now in this priority (a claim asked for its pauses). */
export function openCaps(
  caps: Record<Channel, number>,
  priority: number,
  entries: readonly PauseEntry[],
): Record<Channel, number> {
  const view = pauseView(entries);
  const open = { ...caps };
  for (const channel of CHANNELS) if (view.isPaused(priority, channel)) open[channel] = 0;
  return open;
}

function pauseView(entries: readonly PauseEntry[]): PauseView {
  const paused = new Set(
    entries.filter((e) => e.resumedAt === null).map((e) => `${e.priority}:${e.channel}`),
  );
  const ended = entries.filter((e) => e.resumedAt !== null);
  return {
    isPaused: (priority, channel) => paused.size > 0 && paused.has(`${priority}:${channel}`),
    heldBy: (priority, channel, createdAt, updatedAt) =>
      ended.find(
        (e) =>
          e.priority === priority &&
          e.channel === channel &&
          (e.resumedAt as number) >= updatedAt &&
          (e.resumedAt as number) >= createdAt,
      ),
  };
}

/**
 * A cycle's outcomes, one count per (tenant, channel, outcome), so that the cycle writes the
 * history once whatever its batch (countOutcomes): the completion path is hot.
 */
class OutcomeTally {
  private readonly counts = new Map<string, OutcomeCount>();

  add(row: AppliedRow, outcome: NonNullable<Transition['outcome']>): void {
    const key = `${row.tenant}\u0000${row.channel}\u0000${outcome}`;
    const count = this.counts.get(key);
    if (count) count.n += 1;
    else this.counts.set(key, { tenant: row.tenant, channel: row.channel, outcome, n: 1 });
  }

  all(): OutcomeCount[] {
    return [...this.counts.values()];
  }
}

/**
 * What a cycle's phases leave to be written at its end, in one statement each whatever the
 * phase that made them (#48: a cycle that completes and claims wrote its events twice, each a
 * round trip on PostgreSQL), and the earliest due time the cycle itself gave a waiting row.
 */
class CycleWrites {
  readonly tally = new OutcomeTally();
  /** In the order the phases made them: event ids follow it (SENT precedes DELIVERED). */
  readonly events: EventInput[] = [];
  earliestDue: number | null = null;

  waits(dueAt: number | null): void {
    if (dueAt !== null) this.earliestDue = earliest(this.earliestDue, dueAt);
  }
}

/** Applies completions or reaps: the row changes and copies, and the events of the ones that held. */
function* applyTransitions(
  transitions: readonly Transition[],
  now: number,
  writes: CycleWrites,
): Program<Set<number>> {
  if (transitions.length === 0) return new Set();
  const applied = yield* call((d) => d.transition(transitions, now));
  const rows = new Map<number, AppliedRow>();
  for (const row of applied) rows.set(row.seq, row);
  const { events, tally } = writes;
  const copies: CopyRow[] = [];
  const suppress: Suppression[] = [];
  const gone: GoneTargets[] = [];
  const inbox: InboxEntryRow[] = [];
  // A plain loop: this runs for every completion, thousands a second.
  for (const t of transitions) {
    const row = rows.get(t.seq);
    if (!row) continue;
    for (const event of t.events) events.push(event);
    if (t.change.queueState === 'waiting') writes.waits(t.change.dueAt);
    if (t.suppress) suppress.push(t.suppress);
    if (t.gone) {
      gone.push(t.gone);
      const { tenant, reason } = t.gone;
      for (const recipient of t.gone.keys) suppress.push({ tenant, channel: 'push', recipient, reason });
    }
    if (t.outcome) tally.add(row, t.outcome);
    const message = t.inbox;
    if (message) {
      const { recipientId, title, body, url, data, category } = message;
      inbox.push({
        seq: row.seq,
        id: row.id,
        tenant: row.tenant,
        recipientId,
        title,
        body,
        url,
        data,
        category,
      });
    }
    const copy = t.copy;
    if (copy) {
      copies.push({
        seq: row.seq,
        id: row.id,
        tenant: row.tenant,
        attempt: t.attempt,
        channel: copy.channel,
        recipient: copy.recipient,
        content: copy.content,
      });
    }
  }
  if (copies.length > 0) yield* call((d) => d.storeCopies(copies, now));
  if (inbox.length > 0) yield* call((d) => d.storeInbox(inbox, now));
  if (suppress.length > 0) yield* call((d) => d.suppress(suppress, now));
  if (gone.length > 0) yield* call((d) => d.dropPushTargets(gone, now));
  return new Set(rows.keys());
}

/**
 * How many times one priority is claimed in a step when rows of its last claim took no slot:
 * rows a suppression stopped, and rows found past their expiresAt (EXPIRED without a provider
 * call, so they must not use up a provider's room). Their room is given back and asked for again.
 * Bounded so that a step stays short whatever the backlog; the worker steps again at once after
 * a step that left rows behind.
 */
const CLAIM_ROUNDS = 4;

/** Rows of one channel a claim reads: one more than it may take, to tell whether rows are left. */
export const headsToRead = (limit: number, cap: number): number => (cap > 0 ? Math.min(limit, cap) + 1 : 0);

/**
 * Claims ready rows in strict (priority, seq) order within the budget. Per priority, the driver
 * claims in seq order across the unpaused channels with room; once a priority leaves ready rows
 * behind for lack of budget, lower priorities wait (channel capacity alone does not hold them).
 * A row a suppression stops or found expired takes no slot: its room goes to the next rows of
 * the same priority (CLAIM_ROUNDS).
 */
function* claimInOrder(
  owner: string,
  now: number,
  leaseUntil: number,
  budget: ClaimBudget,
  writes: CycleWrites,
): Program<{
  claimed: NotificationRecord[];
  expired: number;
  backlog: boolean[];
  suppressed: number;
  forLane: boolean;
}> {
  // The pauses come with the cycle's first claim (claimPriority's pauseHistory), or are read on
  // their own when a count of the lane's rows comes first (their channels' room depends on them).
  let view: PauseView | undefined;
  // Which priorities had ready rows at the first claim, where its driver tells (anyReady): one
  // with none is passed over, as a claim of it would take nothing and leave nothing behind. A row
  // made ready since waits for the next cycle, as one made ready just after a claim would.
  let anyReady: boolean[] | undefined;
  const claimed: NotificationRecord[] = [];
  const backlog = [false, false, false, false];
  const used: Record<Channel, number> = { email: 0, sms: 0, push: 0, inapp: 0 };
  const { events } = writes;
  const stopped = new Map<number, Transition>();
  let expired = 0;
  let shared = 0;
  let stop = false;
  let forLane = false;
  for (const [priority, priorityLimit] of budget.perPriority.entries()) {
    if (anyReady?.[priority] === false) continue;
    const open = priority === 0 ? priorityLimit : Math.min(priorityLimit, budget.sharedLimit - shared);
    let limit = stop ? 0 : Math.max(0, open);
    // Each channel's room in this priority; before the pauses are known, as if none were paused.
    const capsOf = (): Record<Channel, number> => {
      const room: Record<Channel, number> = { email: 0, sms: 0, push: 0, inapp: 0 };
      for (const channel of CHANNELS) {
        if (!view?.isPaused(priority, channel))
          room[channel] = Math.max(0, (budget.perChannel[priority]?.[channel] ?? 0) - used[channel]);
      }
      return room;
    };
    let caps = capsOf();
    // Nothing to take: the backlog flag of a priority with rows but no budget is still needed,
    // so skip only when no channel has room either.
    if (limit === 0 && CHANNELS.every((c) => caps[c] === 0)) continue;
    const toLane = budget.toLane;
    if (toLane?.priorities[priority]) {
      // The urgent lane claims these beside this cycle: taking or locking one here would hold it
      // until this cycle commits, behind its bulk work. Rows within the limit are the lane's to
      // take; more than that is a backlog, as for a claim that left rows behind. A wake-up
      // announced the new ones; the lane is asked for those none did.
      if (view === undefined) {
        view = pauseView(yield* call((d) => d.pauses(PAUSE_HISTORY)));
        caps = capsOf();
      }
      const roomy = CHANNELS.filter((c) => caps[c] > 0);
      const { ready, waited } =
        roomy.length === 0
          ? { ready: 0, waited: 0 }
          : yield* call((d) => d.readyCount(priority, roomy, limit + 1, toLane.before));
      if (waited > 0) forLane = true;
      backlog[priority] = ready > limit;
      if (priority > 0) shared += Math.min(ready, limit);
      if (ready > limit) stop = true;
      continue;
    }
    for (let round = 1; ; round++) {
      const history = view === undefined ? PAUSE_HISTORY : 0;
      const result = yield* call((d) =>
        d.claimPriority(owner, now, leaseUntil, priority, limit, caps, history),
      );
      if (view === undefined) {
        view = pauseView(result.pauses ?? []);
        anyReady = result.anyReady;
        caps = capsOf();
      }
      for (const seq of result.expired) events.push({ seq, type: 'EXPIRED' });
      expired += result.expired.length;
      backlog[priority] = result.backlog;
      const rows = result.claimed.map((c) => c.record);
      // People first: a suppression is checked against the address the person resolves to.
      const skipped = yield* resolvePeople(owner, rows);
      const halted = yield* suppressedAmong(
        owner,
        skipped.size === 0 ? rows : rows.filter((r) => !skipped.has(r.seq)),
      );
      for (const [seq, skip] of skipped) halted.set(seq, skip);
      for (const { record, touchedAt } of result.claimed) {
        const halt = halted.get(record.seq);
        if (halt) {
          const at = claimTime(record, now);
          stopped.set(record.seq, { ...halt, events: halt.events.map((event) => ({ ...event, at })) });
          continue;
        }
        // A pause's THROTTLED event goes before the PROCESSING it delayed, once per pause.
        const held = view.heldBy(priority, record.channel, record.createdAt, touchedAt);
        if (held && !(yield* call((d) => d.hasThrottled(record.seq, held.pausedAt)))) {
          events.push(pauseEvent(record.seq, held, record.createdAt));
        }
        events.push(processingEvent(record, now));
        used[record.channel] += 1;
        caps[record.channel] -= 1;
        claimed.push(record);
      }
      const sendable = result.claimed.length - halted.size;
      if (priority > 0) shared += sendable;
      limit -= sendable;
      if (result.backlog && limit <= 0) stop = true;
      const gaveBack = halted.size + result.expired.length;
      if (gaveBack === 0 || !result.backlog || limit <= 0 || CHANNELS.every((c) => caps[c] <= 0)) break;
      if (round === CLAIM_ROUNDS) {
        // Rows of this priority are left behind: lower priorities wait for the next step.
        stop = true;
        break;
      }
    }
  }
  yield* applyTransitions([...stopped.values()], now, writes);
  return { claimed, expired, backlog, suppressed: stopped.size, forLane };
}

/**
 * Resolves the claimed notifications to people (`recipient: { id }`, docs/sending-to-people.md) in the claim's
 * transaction: their recipients in one read, and the categories they name in one more (only when
 * a non-CRITICAL one names a category; CRITICAL ignores preferences). The rule is
 * recipients/resolve.ts: a row to SKIP becomes a transition to SKIPPED; the others are given the
 * resolved address (`recipient`) and the person (`person`) for their delivery.
 */
function* resolvePeople(
  owner: string,
  taken: readonly NotificationRecord[],
): Program<Map<number, Transition>> {
  const skipped = new Map<number, Transition>();
  const people: NotificationRecord[] = [];
  for (const record of taken) if (record.recipient.id !== undefined) people.push(record);
  if (people.length === 0) return skipped;
  const keys = people.map((r) => ({ tenant: r.tenant, id: r.recipient.id as string }));
  const found = new Map<string, RecipientRecord>();
  for (const r of yield* call((d) => d.recipients(keys))) found.set(recipientKeyText(r), r);
  const named = people.filter((r) => r.category !== null && r.priority !== 'CRITICAL');
  const declared = new Map<string, CategoryRecord>();
  if (named.length > 0) {
    const wanted = named.map((r) => ({ tenant: r.tenant, name: r.category as string }));
    for (const c of yield* call((d) => d.categories(wanted))) declared.set(`${c.tenant}\u0000${c.name}`, c);
  }
  for (const [i, record] of people.entries()) {
    const category =
      record.category === null ? undefined : declared.get(`${record.tenant}\u0000${record.category}`);
    const outcome = resolve(record, found.get(recipientKeyText(keys[i] as RecipientKey)), category);
    if ('skip' in outcome) {
      skipped.set(record.seq, skippedEffect(owner, record.seq, record.attempts, outcome.skip));
    } else {
      record.recipient = outcome.recipient;
      record.person = outcome.person;
    }
  }
  return skipped;
}

/**
 * The claimed rows a suppression stops, as transitions to FAILED: one look-up for the whole
 * claim (CRITICAL rows are not looked up, since nothing stops them), and the rule of what a
 * suppression stops in suppressions/model.ts. A push to a person looks up each of its targets:
 * the suppressed ones are left out of its send, and it is stopped only when all of them are.
 */
function* suppressedAmong(
  owner: string,
  taken: readonly NotificationRecord[],
): Program<Map<number, Transition>> {
  const stopped = new Map<number, Transition>();
  const keyed: Array<{ record: NotificationRecord; target: Recipient; key: SuppressionKey }> = [];
  for (const record of taken) {
    if (record.priority === 'CRITICAL') continue;
    for (const target of record.person?.targets ?? [record.recipient]) {
      const recipient = suppressionKey(target);
      if (recipient === undefined) continue;
      keyed.push({ record, target, key: { tenant: record.tenant, channel: record.channel, recipient } });
    }
  }
  if (keyed.length === 0) return stopped;
  const hits = yield* call((d) => d.suppressions(keyed.map((k) => k.key)));
  if (hits.length === 0) return stopped;
  const found = new Map(hits.map((h) => [keyText(h), h]));
  // The targets each row loses, and the first suppression that took one.
  const lost = new Map<NotificationRecord, { targets: Set<Recipient>; hit: SuppressionRecord }>();
  for (const { record, target, key } of keyed) {
    const hit = found.get(keyText(key));
    if (!hit || !blocks(hit.reason, record.priority)) continue;
    const entry = lost.get(record);
    if (entry) entry.targets.add(target);
    else lost.set(record, { targets: new Set([target]), hit });
  }
  for (const [record, { targets, hit }] of lost) {
    const left = (record.person?.targets ?? [record.recipient]).filter((t) => !targets.has(t));
    const first = left[0];
    if (first === undefined) {
      stopped.set(record.seq, suppressedEffect(owner, record.seq, record.attempts, hit));
    } else if (record.person) {
      record.person.targets = left;
      record.recipient = first;
    }
  }
  return stopped;
}

/** What a driver's promoteTurn is asked to do. */
export interface PromotionTurn {
  after: string;
  looks: number;
  visits: number;
  quota: number;
  limit: number;
}

/**
 * Where each priority's walk of tenants stopped at the last promotion, by priority rank ('' is
 * before the first tenant). A queue store keeps one for its life, so the turns go round across
 * steps.
 */
export type PromotionTurns = string[];
export const promotionTurns = (): PromotionTurns => PRIORITIES.map(() => '');

/** Tenants with due rows a promotion visits per priority and step (each visit two index seeks). */
const TURN_VISITS = 64;
/**
 * Tenants a promotion looks at per priority and step, those it passes over included (one seek
 * each): a tenant whose waiting rows are all scheduled later costs the walk a seek, not a visit.
 */
const TURN_LOOKS = 16 * TURN_VISITS;

/**
 * A priority's turn of the walk of tenants, from where its last one stopped, for `left` rows at
 * most: an equal share of them for each tenant it visits (the workflow engine's take of due runs
 * follows the same rule, store/due-runs.ts).
 */
export const turnFrom = (after: string, left: number): PromotionTurn => ({
  after,
  looks: TURN_LOOKS,
  visits: TURN_VISITS,
  quota: Math.ceil(left / TURN_VISITS),
  limit: left,
});

/**
 * A turn's walk done one seek at a time (SQLite's, where a statement is no round trip): `next`
 * gives the first index entry of the tenant after the one named (its earliest due time), `take`
 * up to `n` of one tenant's due rows. Answers what it took and the last tenant it looked at, null
 * past the last (promoteTurn's answer).
 */
export function walkTenants<T>(
  now: number,
  { after, looks, visits, quota, limit }: PromotionTurn,
  next: (after: string) => { tenant: string; due_at: number } | undefined,
  take: (tenant: string, n: number) => T[],
): { taken: T[]; last: string | null } {
  const taken: T[] = [];
  let visited = 0;
  let tenant: string | null = after;
  for (let looked = 0; looked < looks && visited < visits && taken.length < limit; looked++) {
    const entry = next(tenant);
    if (entry === undefined) return { taken, last: null };
    tenant = entry.tenant;
    if (entry.due_at > now) continue;
    visited++;
    for (const row of take(tenant, Math.min(quota, limit - taken.length))) taken.push(row);
  }
  return { taken, last: tenant };
}

/**
 * Waiting rows due by `now` back to ready, at most `limit`: CRITICAL ones first, then HIGH,
 * NORMAL and LOW (a CRITICAL retry is never behind LOW). Within a priority, tenants take turns
 * first: a walk of up to TURN_VISITS tenants with due rows from where the last step's walk
 * stopped (passing over those with none due), moving an equal share of `limit` of each one's
 * due rows, so one tenant's million rows falling due just before another's row do not hold that
 * row back for the million's promotion. What the turns leave of `limit` goes in due order, so a
 * tenant alone keeps the whole step's pace; with no more rows due than `limit`, there is no walk.
 */
function* promote(now: number, limit: number, turns: PromotionTurns): Program<number[]> {
  const promoted = PRIORITIES.map(() => 0);
  if (limit === 0) return promoted;
  // Promoting one priority changes no other's due rows: the four counts are read once.
  const dues = yield* call((d) => d.dueCounts(now, limit + 1));
  let left = limit;
  for (const [priority] of PRIORITIES.entries()) {
    if (left === 0) break;
    const turn = turnFrom(turns[priority] ?? '', left);
    // The walk only when more rows are due than the step may promote; else due order takes all.
    const due = dues[priority] ?? 0;
    if (due === 0) continue;
    const before = left;
    if (due > left) {
      const walked = yield* call((d) => d.promoteTurn(priority, now, turn));
      turns[priority] = walked.last ?? '';
      left -= walked.promoted;
    }
    if (left > 0) left -= yield* call((d) => d.promoteDue(priority, now, left));
    promoted[priority] = before - left;
  }
  return promoted;
}

/**
 * One scheduler step in one transaction: complete, promote, reap, claim (see CycleInput).
 * `turns` is the store's promotion state (promotionTurns).
 */
export function* cycleProgram(input: CycleInput, turns: PromotionTurns): Program<CycleResult> {
  const { owner, now } = input;
  const writes = new CycleWrites();
  const completions = input.completions.map((c) => effectOf(owner, c, now));
  const applied = yield* applyTransitions(completions, now, writes);
  const promotedBy = yield* promote(now, input.promoteLimit ?? 1000, turns);
  const reapLimit = input.reapLimit ?? 1000;
  // A limit of 0 (the scheduler's urgent lane) reads no leases at all.
  const leases = reapLimit > 0 ? yield* call((d) => d.expiredLeases(now, reapLimit)) : [];
  const reaped = yield* applyTransitions(
    leases.map((lease) => reapEffect(lease, input.maxAttempts)),
    now,
    writes,
  );
  const outcome = input.claim
    ? yield* claimInOrder(owner, now, input.leaseUntil, input.claim, writes)
    : { claimed: [], expired: 0, backlog: [false, false, false, false], suppressed: 0, forLane: false };
  const stale = input.completions.filter((c) => !applied.has(c.seq)).map((c) => c.seq);
  const { events } = writes;
  if (events.length > 0) yield* call((d) => d.appendEvents(events, now));
  // A cycle that promotes nothing (the urgent lane) can only have made rows wait itself (a retry,
  // a hold): its own earliest due time tells the worker all it needs, without a read (CycleResult).
  const nextDueAt = input.promoteLimit === 0 ? writes.earliestDue : yield* call((d) => d.nextDueAt());
  const counts = writes.tally.all();
  if (counts.length > 0) yield* call((d) => d.countOutcomes(counts, now));
  return {
    ...outcome,
    // Rows this cycle made ready announce themselves to no lane: it is asked to claim them.
    forLane:
      outcome.forLane || promotedBy.some((n, priority) => n > 0 && input.claim?.toLane?.priorities[priority]),
    applied: input.completions.length - stale.length,
    stale,
    promoted: promotedBy.reduce((a, b) => a + b, 0),
    reaped: reaped.size,
    nextDueAt,
  };
}

/** The cells a pause or resume applies to: every priority and channel the selector leaves open. */
export function cellsOf(selector: QueueSelector): Array<{ priority: number; channel: Channel }> {
  const priorities = selector.priority === undefined ? PRIORITIES.map((_, i) => i) : [selector.priority];
  const channels = selector.channel === undefined ? CHANNELS : [selector.channel];
  return priorities.flatMap((priority) => channels.map((channel) => ({ priority, channel })));
}

const earliest = (a: number | null, b: number) => (a === null ? b : Math.min(a, b));

/** The 16 queues in priority then channel order, from the groups and the paused cells. */
export function statsGrid(
  groups: readonly QueueGroup[],
  paused: ReadonlyArray<{ priority: number; channel: string }>,
): QueueStat[] {
  const cells = new Map<string, QueueStat>();
  for (const [priority] of PRIORITIES.entries()) {
    for (const channel of CHANNELS) {
      cells.set(`${priority}:${channel}`, {
        priority,
        channel,
        depth: 0,
        oldestCreatedAt: null,
        scheduled: 0,
        oldestDueCreatedAt: null,
        inFlight: 0,
        paused: false,
      });
    }
  }
  for (const g of groups) {
    const cell = cells.get(`${g.priority}:${g.channel}`);
    if (!cell) continue;
    if (g.state === 'leased') {
      cell.inFlight += g.n;
      continue;
    }
    cell.depth += g.n;
    if (g.state === 'scheduled') cell.scheduled += g.n;
    if (g.oldest !== null) {
      cell.oldestCreatedAt = earliest(cell.oldestCreatedAt, g.oldest);
      if (g.state !== 'scheduled') cell.oldestDueCreatedAt = earliest(cell.oldestDueCreatedAt, g.oldest);
    }
  }
  for (const p of paused) {
    const cell = cells.get(`${p.priority}:${p.channel}`);
    if (cell) cell.paused = true;
  }
  return [...cells.values()];
}
