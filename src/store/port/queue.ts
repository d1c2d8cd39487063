import type { Channel, Content, NotificationRecord, Recipient } from '../../notifications/model.ts';

/** A claim's hold on one notification: completions are fenced by owner and attempt. */
export interface LeaseRef {
  seq: number;
  /** The attempt number the claim gave it (notifications.attempts after the claim). */
  attempt: number;
}

/** A message the sandbox provider "delivered", stored with its DELIVERED completion. */
export interface SandboxMessageInput {
  channel: Channel;
  recipient: Recipient;
  content: Content;
}

/**
 * The outcome of one leased attempt. Applied only while the lease is still this worker's
 * (lease_owner and attempts unchanged), so a stale worker cannot overwrite a newer attempt.
 */
export type Completion = LeaseRef &
  (
    | {
        /** SENT, or SENT then DELIVERED when the provider confirmed delivery synchronously. */
        kind: 'sent' | 'delivered';
        provider: string;
        providerMessageId?: string;
        detail?: string;
        sandbox?: SandboxMessageInput;
      }
    | {
        /** ATTEMPT_FAILED then RETRYING; parked until nextAttemptAt, keeping its seq. */
        kind: 'retry';
        provider?: string;
        detail: string;
        nextAttemptAt: number;
      }
    | { /** ATTEMPT_FAILED then FAILED. */ kind: 'failed'; provider?: string; detail: string }
    | {
        /**
         * Un-claims without using up the attempt (open circuit, rate limit, shutdown): RETRYING,
         * attempts back to what they were, a THROTTLED event, ready again at `until`.
         */
        kind: 'hold';
        provider?: string;
        detail: string;
        until: number;
      }
  );

/** How much one cycle may claim: per priority rank (0 CRITICAL..3 LOW) and per channel. */
export interface ClaimBudget {
  /** Index = priority rank; 0 claims nothing of that priority. */
  perPriority: readonly number[];
  /** Most rows of HIGH, NORMAL and LOW together (CRITICAL is bounded by its own limit only). */
  sharedLimit: number;
  /** Most rows per channel in this claim (provider rate and concurrency); a missing channel claims nothing. */
  perChannel: Partial<Record<Channel, number>>;
}

/**
 * One scheduler step, in one transaction: apply completions, promote due waiting rows, return
 * expired leases, then claim. One commit (one fsync) per step instead of one per phase.
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
  promoted: number;
  reaped: number;
  /** Index = priority rank: ready rows of that priority remain unclaimed in unpaused queues. */
  backlog: boolean[];
  /** The earliest due_at among waiting rows, to sleep until then. */
  nextDueAt: number | null;
}

/** One of the 12 priority × channel queues, as GET /admin/queues shows it. */
export interface QueueStat {
  priority: number;
  channel: Channel;
  /** QUEUED and RETRYING rows: ready and waiting (scheduled ones included). */
  depth: number;
  /** created_at of the oldest waiting row, or null when empty. */
  oldestCreatedAt: number | null;
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
  /** The 12 queues, in priority then channel order. */
  stats(): Promise<QueueStat[]>;
  /**
   * Pauses or resumes the selected queues, in O(1) whatever their depth. Notifications held back
   * by a pause get their THROTTLED event when they are next considered (claimed after the
   * resume), or at acceptance when ingest calls throttleIfPaused.
   */
  setPaused(selector: QueueSelector, paused: boolean, now: number): Promise<void>;
  /**
   * Writes a THROTTLED event for each of these notifications whose queue is paused now, for ingest
   * to call after accepting into a paused queue (optional: the claim after the resume catches up).
   */
  throttleIfPaused(seqs: readonly number[], now: number): Promise<number>;
}
