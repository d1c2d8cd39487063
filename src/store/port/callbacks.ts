import type { Status } from '../../notifications/model.ts';

/** A tenant's status callback (docs/callbacks.md). Secrets are stored sealed; the adapter never opens them. */
export interface CallbackRecord {
  id: string;
  tenant: string;
  url: string;
  /** The statuses it reports. */
  events: Status[];
  secret: string;
  /** The secret before the last rotation, still signed with until a day after `rotatedAt`. */
  previousSecret: string | null;
  rotatedAt: number | null;
  disabledAt: number | null;
  disabledReason: string | null;
  createdAt: number;
}

/** A message the fan-out adds: one status change for one callback, its body fixed from then on. */
export interface NewCallbackMessage {
  id: string;
  callbackId: string;
  notificationId: string;
  body: string;
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

/** Callbacks, their outbox of messages and the attempts made (src/callbacks). */
export interface CallbackStore {
  create(callback: CallbackRecord): Promise<void>;
  /** The tenant's callbacks, oldest first. */
  list(tenant: string): Promise<CallbackRecord[]>;
  get(tenant: string, id: string): Promise<CallbackRecord | undefined>;
  /** Every enabled callback of every tenant (the fan-out's and the sender's view). */
  enabled(): Promise<CallbackRecord[]>;
  /** Removes the callback with its messages and attempts; false when the tenant has no such one. */
  remove(tenant: string, id: string): Promise<boolean>;
  /** Replaces the secret, keeping the old one as previousSecret; false when no such callback. */
  rotateSecret(tenant: string, id: string, secret: string, now: number): Promise<boolean>;
  /** Disables the callback (its receiver answered 410) and gives up its pending messages. */
  disable(id: string, reason: string, now: number): Promise<void>;
  /** The fan-out's place in the status log; null before the first fan-out. */
  fanoutCursor(): Promise<string | null>;
  /**
   * Adds the messages and moves the fan-out's cursor from `from` to `to`, in one transaction;
   * false (and nothing added) when another process moved it first.
   */
  fanOut(
    from: string | null,
    to: string,
    messages: readonly NewCallbackMessage[],
    now: number,
  ): Promise<boolean>;
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
  /** A tenant's callback's attempts, newest first, below `before`; undefined when no such callback. */
  deliveries(
    tenant: string,
    id: string,
    before: number | undefined,
    limit: number,
  ): Promise<AttemptRecord[] | undefined>;
}
