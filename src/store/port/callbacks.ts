import type { CallbackEvent } from './status-log.ts';

/** A tenant's status callback (docs/callbacks.md). Secrets are stored sealed; the adapter never opens them. */
export interface CallbackRecord {
  id: string;
  tenant: string;
  url: string;
  /**
   * The statuses it reports (and the reading events of `inapp` messages it was asked for, and
   * RUN_CHANGE: workflow runs' changes).
   */
  events: CallbackEvent[];
  secret: string;
  /** The secret before the last rotation, still signed with until a day after `rotatedAt`. */
  previousSecret: string | null;
  rotatedAt: number | null;
  disabledAt: number | null;
  disabledReason: string | null;
  createdAt: number;
}

/**
 * A message that waits in the outbox (callback_messages): one whose first attempt failed and is
 * retried, or one held behind such a message of its notification. Messages whose first attempt
 * succeeds never get a row: they are read from the status log and sent.
 */
export interface WaitingMessage {
  id: string;
  callbackId: string;
  notificationId: string;
  body: string;
  /** Attempts made so far (0 when it was held without one). */
  attempts: number;
  dueAt: number;
  /** When the status change happened: the 24 h of retries count from it. */
  createdAt: number;
  /** The notification's stored `traceparent`: a retry's POST continues its trace too. */
  traceContext?: string;
}

/** An attempt to record for GET /callbacks/{id}/deliveries. */
export interface NewAttempt {
  callbackId: string;
  messageId: string;
  notificationId: string;
  attempt: number;
  statusCode: number | null;
  error: string | null;
}

/** What a head step settled: the attempts made and the messages that go to the outbox. */
export interface HeadProgress {
  attempts: readonly NewAttempt[];
  waiting: readonly WaitingMessage[];
}

/** A message leased for one attempt, with what sending it needs. */
export interface LeasedMessage {
  id: string;
  callbackId: string;
  notificationId: string;
  body: string;
  /** This attempt's number (1 for the first). */
  attempt: number;
  createdAt: number;
  /**
   * The notification's stored `traceparent`, read with the change from the status log: the POST
   * continues its trace (docs/tracing.md); a retry reads it from the outbox, which keeps it.
   */
  traceContext?: string;
}

/** How an attempt ended: the receiver took it, try again at `retryAt`, or give it up. */
export type MessageOutcome = { kind: 'delivered' } | { kind: 'retry'; retryAt: number } | { kind: 'failed' };

/** One finished attempt of a leased message, as the sender reports it. */
export interface FinishedAttempt {
  message: LeasedMessage;
  outcome: MessageOutcome;
  statusCode: number | null;
  error: string | null;
}

/** The record of a finished attempt, as both stores keep it. */
export function attemptOf({ message, statusCode, error }: FinishedAttempt): NewAttempt {
  const { callbackId, id: messageId, notificationId, attempt } = message;
  return { callbackId, messageId, notificationId, attempt, statusCode, error };
}

/** What one attempt got, for GET /callbacks/{id}/deliveries. */
export interface AttemptRecord {
  /** The row's key in the attempts list, newest highest (the page cursor). */
  seq: number;
  messageId: string;
  notificationId: string;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  at: number;
}

/**
 * Callbacks (src/callbacks): each one's place in the status log, the messages waiting for a retry,
 * and the attempts made.
 */
export interface CallbackStore {
  /**
   * Adds a callback that reports the changes after `cursor` (the status log's head at creation);
   * false, and nothing written, when its tenant already has `perTenant` callbacks (concurrent
   * creations included: the count and the insert are one step).
   */
  create(callback: CallbackRecord, cursor: string, perTenant: number): Promise<boolean>;
  /** The tenant's callbacks, oldest first. */
  list(tenant: string): Promise<CallbackRecord[]>;
  get(tenant: string, id: string): Promise<CallbackRecord | undefined>;
  /** Every enabled callback of every tenant (the sender's view). */
  enabled(): Promise<CallbackRecord[]>;
  /**
   * Removes the callback with its pending messages and its attempts (its settled messages are left
   * to prune); false when the tenant has no such one.
   */
  remove(tenant: string, id: string): Promise<boolean>;
  /** Replaces the secret, keeping the old one as previousSecret; false when no such callback. */
  rotateSecret(tenant: string, id: string, secret: string, now: number): Promise<boolean>;
  /** Disables the callback (its receiver answered 410) and gives up its pending messages. */
  disable(id: string, reason: string, now: number): Promise<void>;
  /**
   * Takes or renews the lease on reading the callback's new changes from the status log (its
   * head) for `owner` until `leaseUntil`, and answers the callback's place in the log; undefined
   * when another owner's lease is still running or the callback is gone or disabled.
   */
  leaseHead(id: string, owner: string, now: number, leaseUntil: number): Promise<string | undefined>;
  /**
   * Moves the callback's place in the log from `from` to `to`, renewing the lease, and records
   * what the step settled, in one transaction; false (and nothing written) when `owner` no longer
   * holds the lease or another owner moved the place first.
   */
  advance(
    id: string,
    owner: string,
    from: string,
    to: string,
    progress: HeadProgress,
    now: number,
    leaseUntil: number,
  ): Promise<boolean>;
  /** Which of these notifications have a message to this callback still pending in the outbox. */
  pendingAmong(id: string, notificationIds: readonly string[]): Promise<Set<string>>;
  /** Enabled callbacks with a message due by `now` and not leased, oldest callback first. */
  dueCallbacks(now: number, limit: number): Promise<string[]>;
  /**
   * Leases up to `limit` due messages of one callback until `leaseUntil`, one more attempt each.
   * A message is due only when no earlier message of its notification to this callback is still
   * pending, so the messages of one notification go out in status order.
   */
  claim(
    callbackId: string,
    owner: string,
    now: number,
    leaseUntil: number,
    limit: number,
  ): Promise<LeasedMessage[]>;
  /**
   * Records attempts and applies their outcomes, each only if its lease is still `owner`'s, in
   * one transaction: the sender commits a pass's attempts together, not one fsync each.
   */
  complete(owner: string, attempts: readonly FinishedAttempt[], now: number): Promise<void>;
  /**
   * Forgets the history older than `before`: attempts, and outbox messages that are settled
   * (delivered or given up; pending ones stay whatever their age). Deletes the oldest rows first,
   * at most `limit` of each table; answers how many rows went.
   */
  prune(before: number, limit: number): Promise<number>;
  /** A tenant's callback's attempts, newest first, below `before`; undefined when no such callback. */
  deliveries(
    tenant: string,
    id: string,
    before: number | undefined,
    limit: number,
  ): Promise<AttemptRecord[] | undefined>;
}
