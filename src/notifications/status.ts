import type { Channel, Content } from '../channels.ts';
import {
  type Suppression,
  type SuppressionReason,
  type SuppressionRecord,
  suppressedDetail,
  suppressionKey,
} from '../suppressions/model.ts';
import type { DeliveryReport } from './delivery-report.ts';
import { type EventType, priorityOf, type Recipient, type Status, TERMINAL_STATUSES } from './model.ts';
import type { Outcome } from './outcomes.ts';

/**
 * The status machine: every change the queue and delivery reports make to a notification is
 * decided here, once, as data (River's "the core decides the transition, the driver applies
 * it"). The store adapters only apply these decisions with their own SQL.
 */

/**
 * Status only moves forward. A change from `from` to `to` is allowed when `to` ranks higher;
 * RETRYING and PROCESSING alternate (same rank band), and a redrive (FAILED -> QUEUED) is the
 * one sanctioned step back, done explicitly by the retry endpoint.
 */
const RANK: Record<Status, number> = {
  QUEUED: 0,
  PROCESSING: 1,
  RETRYING: 1,
  SENT: 2,
  DELIVERED: 3,
  FAILED: 3,
  CANCELLED: 3,
  EXPIRED: 3,
  SKIPPED: 3,
};

export function canMove(from: Status, to: Status): boolean {
  if (TERMINAL_STATUSES.has(from)) return false;
  if (from === to) return false;
  if ((from === 'PROCESSING' && to === 'RETRYING') || (from === 'RETRYING' && to === 'PROCESSING'))
    return true;
  return RANK[to] > RANK[from];
}

/** Where a row sits in the queue: claimable, parked until due, held by a worker, or out of it. */
export type QueueState = 'ready' | 'waiting' | 'leased' | null;

/** An event to append; `at` defaults to the time of the transaction that writes it. */
export interface EventInput {
  seq: number;
  type: EventType;
  at?: number;
  attempt?: number | null;
  provider?: string | null;
  detail?: string | null;
  source?: string | null;
  /** The locale variant a SENT message was rendered from (docs/localization.md). */
  locale?: string | null;
}

/** A message the sandbox provider "delivered", stored with its DELIVERED completion. */
export interface SandboxCopy {
  channel: Channel;
  recipient: Recipient;
  content: Content;
}

/**
 * An `inapp` message as the inbox stores it (docs/inbox.md): the rendered content, for the
 * notification's recipient. Stored by its completion, with its DELIVERED event.
 */
export interface InboxEntry {
  recipientId: string;
  title: string;
  body: string;
  url: string | null;
  data: Record<string, unknown> | null;
  category: string | null;
}

/**
 * Push targets of a person that answered gone in an attempt (docs/sending-to-people.md): removed from the
 * profile and suppressed (§11), in the completion's transaction. `keys` are their suppression keys.
 */
export interface GoneTargets {
  tenant: string;
  id: string;
  keys: string[];
  reason: SuppressionReason;
}

/** What one target of a push to a person said, when others were sent to in the same attempt. */
export interface TargetNote {
  provider?: string;
  detail: string;
}

/** What an attempt to several targets adds to its completion (dispatch/deliver-targets.ts). */
interface TargetsOutcome {
  /** Targets that failed: an ATTEMPT_FAILED event each, before the attempt's own events. */
  notes?: TargetNote[];
  gone?: GoneTargets;
}

/** A claim's hold on one notification: completions are fenced by owner and attempt. */
export interface LeaseRef {
  seq: number;
  /** The attempt number the claim gave it (notifications.attempts after the claim). */
  attempt: number;
}

/**
 * The outcome of one leased attempt, as the worker reports it. Applied only while the lease is
 * still this worker's (lease_owner and attempts unchanged), so a stale worker cannot overwrite a
 * newer attempt.
 */
export type Completion = LeaseRef &
  TargetsOutcome &
  (
    | {
        /** SENT, or SENT then DELIVERED when the provider confirmed delivery synchronously. */
        kind: 'sent' | 'delivered';
        provider: string;
        providerMessageId?: string;
        detail?: string;
        /** What the provider asks to be kept with the completion (the sandbox's copy). */
        copy?: SandboxCopy;
        /** The locale variant the message was rendered from; undefined: the template itself. */
        locale?: string;
        /**
         * To a person: the suppression key of the address it resolved to, kept with the row so a
         * later bounce or complaint report suppresses that address (the stored recipient is `{ id }`).
         */
        addressKey?: string;
      }
    | {
        /**
         * An `inapp` message stored in its recipient's inbox: DELIVERED (`source: "inbox"`) with
         * no provider, the message committed with it.
         */
        kind: 'stored';
        message: InboxEntry;
        /** The locale variant the message was rendered from; undefined: the template itself. */
        locale?: string;
      }
    | {
        /**
         * ATTEMPT_FAILED then RETRYING; parked until nextAttemptAt, keeping its seq. The row
         * records `provider` as the one that failed, so the next attempt can go to its fallback.
         */
        kind: 'retry';
        provider?: string;
        detail: string;
        nextAttemptAt: number;
      }
    | {
        /** ATTEMPT_FAILED then FAILED; `suppress` when the answer says the recipient is gone for good. */
        kind: 'failed';
        provider?: string;
        detail: string;
        suppress?: Suppression;
      }
    | {
        /**
         * Un-claims without using up the attempt (open circuit, rate limit, shutdown): RETRYING,
         * attempts back to what they were, ready again at `until`, and a THROTTLED event unless
         * the notification is already in a run of holds (`repeat`): one event per episode, so
         * a notification held on every claim does not grow its event list without end.
         */
        kind: 'hold';
        provider?: string;
        detail: string;
        until: number;
        repeat: boolean;
      }
  );

/** What a transition writes on the notification's row. Every one of them ends the lease. */
export interface RowChange {
  status: Status;
  queueState: QueueState;
  dueAt: number | null;
  nextAttemptAt: number | null;
  /** -1 gives the claimed attempt back (a hold: no provider was called). */
  attemptsDelta: 0 | -1;
  /** A hold counts one more consecutive hold; every other transition ends the run. */
  hold: boolean;
  /** Set on a send: the provider and its message id (null when it gave none). */
  sent?: { provider: string; providerMessageId: string | null; addressKey: string | null };
  /** Set on a retry: the provider whose failure it follows (the next attempt prefers another). */
  tried?: string;
}

/** A change with nothing left to wait for: out of the queue (`null`) or ready again at once. */
function settled(status: Status, queueState: 'ready' | null): RowChange {
  return { status, queueState, dueAt: null, nextAttemptAt: null, attemptsDelta: 0, hold: false };
}

/** A decided transition of one leased row: the fence it needs, the row change, its events. */
export interface Transition {
  seq: number;
  /** The lease the change is fenced by: it applies only while the row is still leased so. */
  owner: string;
  attempt: number;
  change: RowChange;
  events: EventInput[];
  copy?: SandboxCopy;
  /** The inbox message a `stored` completion keeps. */
  inbox?: InboxEntry;
  /** A suppression the outcome adds, committed with it. */
  suppress?: Suppression;
  /** Gone push targets of a person: out of the profile and suppressed, committed with it. */
  gone?: GoneTargets;
  /** How the delivery history counts it (outcomes.ts), when it ends the notification's sending. */
  outcome?: Outcome;
}

/**
 * The transition a worker's completion makes. On the hot path (thousands a second), so it builds
 * each object once, with no spreads.
 */
export function effectOf(owner: string, c: Completion, now: number): Transition {
  const t = attemptEffect(owner, c, now);
  if (c.notes === undefined && c.gone === undefined) return t;
  // An attempt to several targets: each target that failed says so first, by name.
  if (c.notes) {
    const notes: EventInput[] = c.notes.map((n) => ({
      seq: c.seq,
      type: 'ATTEMPT_FAILED',
      attempt: c.attempt,
      provider: n.provider ?? null,
      detail: n.detail,
    }));
    t.events = [...notes, ...t.events];
  }
  t.gone = c.gone;
  return t;
}

function attemptEffect(owner: string, c: Completion, now: number): Transition {
  const { seq, attempt } = c;
  switch (c.kind) {
    case 'sent':
    case 'delivered': {
      const delivered = c.kind === 'delivered';
      const events: EventInput[] = [
        {
          seq,
          type: 'SENT',
          attempt,
          provider: c.provider,
          detail: c.detail ?? null,
          locale: c.locale ?? null,
        },
      ];
      if (delivered) events.push({ seq, type: 'DELIVERED', provider: c.provider, source: 'provider' });
      return {
        seq,
        owner,
        attempt,
        change: sentChange(
          delivered ? 'DELIVERED' : 'SENT',
          c.provider,
          c.providerMessageId ?? null,
          c.addressKey ?? null,
        ),
        events,
        copy: c.copy,
        outcome: 'DELIVERED',
      };
    }
    case 'stored':
      return {
        seq,
        owner,
        attempt,
        change: settled('DELIVERED', null),
        events: [{ seq, type: 'DELIVERED', attempt, source: 'inbox', locale: c.locale ?? null }],
        inbox: c.message,
        outcome: 'DELIVERED',
      };
    case 'retry':
      return {
        seq,
        owner,
        attempt,
        change: {
          status: 'RETRYING',
          queueState: 'waiting',
          dueAt: c.nextAttemptAt,
          nextAttemptAt: c.nextAttemptAt,
          attemptsDelta: 0,
          hold: false,
          tried: c.provider,
        },
        events: [failedAttempt(c), { seq, type: 'RETRYING', attempt }],
      };
    case 'failed':
      return {
        seq,
        owner,
        attempt,
        change: settled('FAILED', null),
        events: [failedAttempt(c), { seq, type: 'FAILED', attempt, detail: c.detail }],
        suppress: c.suppress,
        outcome: 'FAILED',
      };
    case 'hold': {
      // A hold gives the attempt back: the claim counted it, but no provider was called.
      const ready = c.until <= now;
      return {
        seq,
        owner,
        attempt,
        change: {
          status: 'RETRYING',
          queueState: ready ? 'ready' : 'waiting',
          dueAt: ready ? null : c.until,
          nextAttemptAt: c.until,
          attemptsDelta: -1,
          hold: true,
        },
        events: c.repeat ? [] : [{ seq, type: 'THROTTLED', provider: c.provider ?? null, detail: c.detail }],
      };
    }
  }
}

function sentChange(
  status: Status,
  provider: string,
  providerMessageId: string | null,
  addressKey: string | null,
): RowChange {
  const change = settled(status, null);
  change.sent = { provider, providerMessageId, addressKey };
  return change;
}

const failedAttempt = (c: Extract<Completion, { kind: 'retry' | 'failed' }>): EventInput => ({
  seq: c.seq,
  type: 'ATTEMPT_FAILED',
  attempt: c.attempt,
  provider: c.provider ?? null,
  detail: c.detail,
});

/**
 * A claimed notification whose recipient is suppressed: FAILED at once, in the claim's own
 * transaction, with no provider call (so the attempt the claim counted is given back).
 */
export function suppressedEffect(
  owner: string,
  seq: number,
  attempt: number,
  hit: SuppressionRecord,
): Transition {
  return {
    seq,
    owner,
    attempt,
    change: { ...settled('FAILED', null), attemptsDelta: -1 },
    events: [
      { seq, type: 'FAILED', detail: suppressedDetail(hit.reason, hit.createdAt), source: 'suppression' },
    ],
    // Not sent on purpose: the contract's SKIPPED for a recipient who opted out (outcomes.ts).
    outcome: 'SKIPPED',
  };
}

/**
 * A claimed notification to a person that is not sent on purpose (docs/sending-to-people.md): the recipient was
 * deleted, has no address for the channel, or opted out. SKIPPED at once, in the claim's own
 * transaction, with no provider call (the attempt the claim counted is given back); `detail` says
 * why (recipients/resolve.ts).
 */
export function skippedEffect(owner: string, seq: number, attempt: number, detail: string): Transition {
  return {
    seq,
    owner,
    attempt,
    change: { ...settled('SKIPPED', null), attemptsDelta: -1 },
    events: [{ seq, type: 'SKIPPED', detail, source: 'recipient' }],
    outcome: 'SKIPPED',
  };
}

/** A lease that ran out (its worker died or stalled), as the store found it. */
export interface ExpiredLease {
  seq: number;
  owner: string;
  attempts: number;
}

/** An expired lease goes back to ready as RETRYING, or FAILED once its attempts are used up. */
export function reapEffect(lease: ExpiredLease, maxAttempts: number): Transition {
  const exhausted = lease.attempts >= maxAttempts;
  const status = exhausted ? 'FAILED' : 'RETRYING';
  return {
    seq: lease.seq,
    owner: lease.owner,
    attempt: lease.attempts,
    change: settled(status, exhausted ? null : 'ready'),
    events: [
      {
        seq: lease.seq,
        type: 'ATTEMPT_FAILED',
        attempt: lease.attempts,
        detail: 'lease expired (worker stopped or stalled)',
      },
      {
        seq: lease.seq,
        type: status,
        attempt: lease.attempts,
        detail: exhausted ? 'attempts exhausted' : null,
      },
    ],
    outcome: exhausted ? 'FAILED' : undefined,
  };
}

/** One pause of one queue cell (priority rank and channel). */
export interface PauseEntry {
  priority: number;
  channel: string;
  pausedAt: number;
  resumedAt: number | null;
}

/**
 * When a claim happened, for a row it took: the cycle's time, but never before the notification's
 * acceptance. A cycle takes its time when it begins, and on PostgreSQL it may then claim rows
 * committed after that (any cycle under READ COMMITTED; the urgent lane's mostly). Every event a
 * claim writes for its row is dated so (PROCESSING, and the SKIPPED or FAILED of a row stopped at
 * the claim), and both stores set `updated_at` by the same rule in their claim and transition
 * statements.
 */
export function claimTime(record: { createdAt: number }, now: number): number {
  return Math.max(now, record.createdAt);
}

/** The PROCESSING of a claim. */
export function processingEvent(
  record: { seq: number; attempts: number; createdAt: number },
  now: number,
): EventInput {
  return { seq: record.seq, type: 'PROCESSING', attempt: record.attempts, at: claimTime(record, now) };
}

/** The THROTTLED event of a notification a pause held back, dated when the pause began for it. */
export function pauseEvent(seq: number, pause: PauseEntry, createdAt: number): EventInput {
  return {
    seq,
    type: 'THROTTLED',
    at: Math.max(pause.pausedAt, createdAt),
    detail: `queue ${priorityOf(pause.priority)}/${pause.channel} paused by an admin`,
    source: 'admin',
  };
}

/**
 * What an operator's action does to one notification (POST /notifications/{id}/cancel and /retry in the OpenAPI document: cancel, and retry, which is a
 * redrive): the statuses it applies to (any other answers 409 and changes nothing), the row it
 * leaves, and the event it writes. Decided here; the store adapters apply it (store/actions.ts).
 */
export interface ActionEffect {
  /** The statuses the action applies to. */
  from: readonly Status[];
  status: Status;
  /** Where the row goes in the queue; it leaves no due time behind either way. */
  queueState: 'ready' | null;
  /**
   * A fresh start: attempts, holds, retry time and lease cleared, and the turn of a row joining
   * its tenant's line (store/lanes.ts), as an accepted row gets.
   */
  restart: boolean;
  event: { type: EventType; detail: string | null; source: 'api' };
}

/**
 * Cancel: only what no worker holds. QUEUED and RETRYING are exactly the rows ready or waiting
 * in the queue; a PROCESSING row is leased, and its worker's completion decides it.
 */
export const CANCEL: ActionEffect = {
  from: ['QUEUED', 'RETRYING'],
  status: 'CANCELLED',
  queueState: null,
  restart: false,
  event: { type: 'CANCELLED', detail: null, source: 'api' },
};

/** Redrive: FAILED back to the queue (the one step back canMove does not allow), events kept. */
export const REDRIVE: ActionEffect = {
  from: ['FAILED'],
  status: 'QUEUED',
  queueState: 'ready',
  restart: true,
  event: { type: 'QUEUED', detail: 'redrive', source: 'api' },
};

/** The notification a delivery report was matched to (by provider and provider message id). */
export interface ReportTarget {
  seq: number;
  status: Status;
  tenant: string;
  channel: Channel;
  /** The stored recipient (JSON). */
  recipient: string;
  /** To a person: the suppression key of the address it was sent to (Completion `addressKey`), else null. */
  addressKey: string | null;
}

/** What applying a report does: the status it moves to (or none) and the event it appends. */
export interface ReportEffect {
  moveTo: Status | null;
  event: { type: EventType; detail: string | null };
  /** The suppression the report adds (a bounce, a complaint, an opt-out), whatever the status. */
  suppress?: Suppression;
}

/** The suppression a report asks for, of the notification it was matched to. */
function reportSuppression(target: ReportTarget, report: DeliveryReport): Suppression | undefined {
  if (!report.suppress) return undefined;
  // A person's stored recipient is `{ id }`: the address it was sent to is the one to suppress.
  const recipient = target.addressKey ?? suppressionKey(JSON.parse(target.recipient) as Recipient);
  if (recipient === undefined) return undefined;
  return { tenant: target.tenant, channel: target.channel, recipient, reason: report.suppress };
}

/**
 * What a delivery report does. Only a SENT notification moves: a terminal one keeps its status
 * (a late or replayed report), and one the queue holds again (QUEUED, PROCESSING, RETRYING)
 * belongs to the scheduler, so a report about an earlier attempt is recorded as a WEBHOOK event
 * but does not race the worker's own status writes.
 */
export function reportEffect(target: ReportTarget, report: DeliveryReport): ReportEffect {
  const detail = report.detail ?? null;
  const suppress = reportSuppression(target, report);
  if (target.status === 'SENT' && canMove(target.status, report.outcome)) {
    return { moveTo: report.outcome, event: { type: report.outcome, detail }, suppress };
  }
  const why =
    TERMINAL_STATUSES.has(target.status) || target.status === 'SENT' ? '' : ' (attempt in progress)';
  return {
    moveTo: null,
    event: { type: 'WEBHOOK', detail: `${report.outcome} reported${why}${detail ? `: ${detail}` : ''}` },
    suppress,
  };
}
