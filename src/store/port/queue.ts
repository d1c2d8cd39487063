import type { Channel, NotificationRecord } from '../../notifications/model.ts';
import type { Completion, LeaseRef } from '../../notifications/status.ts';

export type { Completion, LeaseRef };

/** How much one cycle may claim: per priority rank (0 CRITICAL..3 LOW) and per channel. */
export interface ClaimBudget {
  /** Index = priority rank; 0 claims nothing of that priority. */
  perPriority: readonly number[];
  /** Most rows of HIGH, NORMAL and LOW together (CRITICAL is bounded by its own limit only). */
  sharedLimit: number;
  /**
   * Index = priority rank: most rows of that priority per channel in this claim (provider rate
   * and concurrency, less what is reserved for higher priorities); a missing channel claims nothing.
   */
  perChannel: ReadonlyArray<Partial<Record<Channel, number>>>;
  /**
   * Priorities the urgent lane claims (a worker's steps beside the lane on PostgreSQL).
   * `priorities`, index = priority rank: the claim takes none of that priority's rows and locks
   * none; it counts the ready ones in the channels with room, up to its limit and one more, for
   * the backlog flag. `before`: a ready row of theirs that has waited since before it, or that
   * this cycle promoted, was announced by no wake-up in time (`forLane`).
   */
  toLane?: { priorities: readonly boolean[]; before: number };
}

/**
 * One scheduler step, in one transaction: apply completions, promote due waiting rows, return
 * expired leases, then claim. One commit (one fsync) per step instead of one per phase. The
 * order and every decision are written once, in store/queue-core.ts.
 */
export interface CycleInput {
  owner: string;
  now: number;
  /** lease_until for the rows claimed now. */
  leaseUntil: number;
  completions: readonly Completion[];
  /** Omit to only complete/promote/reap. */
  claim?: ClaimBudget;
  /** Attempts after which a reaped lease fails instead of retrying. */
  maxAttempts: number;
  /** Bounds on promoted and reaped rows per cycle, so one step stays short. */
  promoteLimit?: number;
  reapLimit?: number;
  /**
   * A cycle of the scheduler's urgent lane (CRITICAL and HIGH). PostgreSQL runs it on a
   * connection kept for these cycles alone, so it never waits for a free connection of the pool
   * nor behind another statement; SQLite has one connection and ignores it.
   */
  urgent?: boolean;
}

/** What one cycle did. */
export interface CycleResult {
  /** Now PROCESSING and leased to the owner, in claim order (priority, then seq). */
  claimed: NotificationRecord[];
  /** Completions whose fence held (the others were stale and changed nothing). */
  applied: number;
  /** Seqs of the completions whose fence failed. */
  stale: number[];
  expired: number;
  /**
   * Claimed rows a suppression stopped (FAILED) or a person's resolution skipped (SKIPPED), in the
   * claim's transaction; not in `claimed`.
   */
  suppressed: number;
  promoted: number;
  reaped: number;
  /** Index = priority rank: ready rows of that priority remain unclaimed in unpaused queues. */
  backlog: boolean[];
  /**
   * Ready rows of a priority left to the urgent lane (`claim.toLane`) that no wake-up announced:
   * promoted by this cycle, or waiting since before `toLane.before`. The lane should claim now.
   */
  forLane: boolean;
  /**
   * The earliest due_at among waiting rows, to sleep until then. A cycle that promotes nothing
   * (`promoteLimit: 0`, the urgent lane) does not read it: it answers the earliest due_at it gave
   * a row itself (a retry, a hold), or null, and the worker keeps the earlier of that and its own.
   */
  nextDueAt: number | null;
}

/** One of the 16 priority × channel queues, as GET /admin/queues shows it. */
export interface QueueStat {
  priority: number;
  channel: Channel;
  /** QUEUED and RETRYING rows: ready and waiting (scheduled ones included). */
  depth: number;
  /** created_at of the oldest waiting row, or null when empty. */
  oldestCreatedAt: number | null;
  /** Of `depth`, the rows not due yet at `now` (scheduled later, or a retry's backoff). */
  scheduled: number;
  /** created_at of the oldest row that is due (ready, or waiting past its due time), or null. */
  oldestDueCreatedAt: number | null;
  inFlight: number;
  paused: boolean;
}

/** Which queues a pause or resume applies to; an absent field means all of them. */
export interface QueueSelector {
  priority?: number;
  channel?: Channel;
}

/** The queue inside the notifications table, as the scheduler and the admin routes use it. */
export interface QueueStore {
  /** Completes, promotes, reaps and claims in one transaction (see CycleInput). */
  cycle(input: CycleInput): Promise<CycleResult>;
  /** Extends leases still held by `owner` at these attempts; returns how many were extended. */
  renew(owner: string, leases: readonly LeaseRef[], until: number): Promise<number>;
  /**
   * The 16 queues, in priority then channel order: every tenant's rows, or only `tenant`'s
   * (depth, oldest and in flight; a pause holds every tenant, so `paused` is the same either way).
   * With `now`, waiting rows due after it count as `scheduled` (without, every waiting row is due).
   */
  stats(tenant?: string, now?: number): Promise<QueueStat[]>;
  /**
   * Pauses or resumes the selected queues, in O(1) whatever their depth. Notifications held back
   * by a pause get their THROTTLED event when they are next considered (claimed after the resume).
   */
  setPaused(selector: QueueSelector, paused: boolean, now: number): Promise<void>;
  /**
   * Opens the urgent lane's own connections where it has some (PostgreSQL), so that the first
   * CRITICAL does not wait for their connection, authentication and type lookup (under load that
   * first cycle took 136 to 809 ms, decision 0062). A worker calls it when it starts.
   */
  openLanes?(): Promise<void>;
}

/** The same room per channel for every priority (tests and benches that plan no reserve). */
export function everyPriority(
  room: Partial<Record<Channel, number>>,
): Array<Partial<Record<Channel, number>>> {
  return [room, room, room, room];
}
