import {
  attemptOf,
  type FinishedAttempt,
  type HeadProgress,
  type LeasedMessage,
  type NewAttempt,
  type WaitingMessage,
} from '../store/port/callbacks.ts';
import type { LogMessage } from './message.ts';

/**
 * One message of the head: held (an earlier one of its notification is not settled yet), ready,
 * sending, or settled (sent, given up, or bound for the outbox).
 */
interface Entry {
  cursor: string;
  message: LeasedMessage;
  state: 'held' | 'ready' | 'sending' | 'settled';
  /** The attempt, once made. */
  result?: FinishedAttempt;
  /** Settled into the outbox: its attempt is to be retried, or it waits behind one that is. */
  waits: boolean;
  /** The next message of the same notification, held until this one settles. */
  next?: Entry;
}

/** What the settled front of a head records and where it moves the callback's place to. */
export interface Settled {
  to: string;
  progress: HeadProgress;
  count: number;
}

/**
 * A callback's head (docs/callbacks.md): the changes read from the status log after the
 * callback's place and not yet recorded, held by the one worker that leases it. Messages whose
 * first attempt succeeds never touch the database but for the attempt's record; one that fails
 * goes to the outbox for its retries, and every later message of its notification goes there
 * behind it, so a notification's messages keep their order. The place moves over the settled
 * front only, so a crash makes the unsettled ones be read and sent again (same `webhook-id`).
 */
export interface Head {
  readonly callbackId: string;
  /** The callback's place, as last recorded. */
  cursor: string;
  /** How far the log has been read for it. */
  readTo: string;
  /** Messages read and not yet recorded. */
  size(): number;
  hasReady(): boolean;
  /**
   * Adds the messages of the log read up to `readTo`, in log order. `pending` are the
   * notifications with a message of this callback in the outbox: theirs wait behind it.
   */
  add(messages: readonly LogMessage[], readTo: string, pending: ReadonlySet<string>): void;
  /** The next ready message, now sending; hand its attempt to `finish`. */
  take(): LeasedMessage | undefined;
  finish(message: LeasedMessage, result: FinishedAttempt): void;
  /** The settled front: where to move the place and what to record; undefined when none. */
  settled(now: number): Settled | undefined;
  /** The front was recorded: forget it. */
  recorded(settled: Settled): void;
}

export function createHead(callbackId: string, cursor: string): Head {
  const entries: Entry[] = [];
  const ready: Entry[] = [];
  const sending = new Map<LeasedMessage, Entry>();
  /** Each notification's last unrecorded entry, to chain the next one behind it. */
  const lastOf = new Map<string, Entry>();

  const waitBehind = (entry: Entry) => {
    entry.state = 'settled';
    entry.waits = true;
  };
  /** An entry settled: release the next one of its notification, or send it to the outbox too. */
  const release = (entry: Entry) => {
    let next = entry.next;
    if (next && !entry.waits) {
      next.state = 'ready';
      ready.push(next);
      return;
    }
    for (; next; next = next.next) waitBehind(next);
  };

  const head: Head = {
    callbackId,
    cursor,
    readTo: cursor,
    size: () => entries.length,
    hasReady: () => ready.length > 0,
    add(messages, readTo, pending) {
      for (const { cursor: at, message } of messages) {
        const entry: Entry = { cursor: at, message, state: 'ready', waits: false };
        const before = lastOf.get(message.notificationId);
        if (pending.has(message.notificationId) || (before?.state === 'settled' && before.waits)) {
          waitBehind(entry);
        } else if (before && before.state !== 'settled') {
          entry.state = 'held';
          before.next = entry;
        } else {
          ready.push(entry);
        }
        lastOf.set(message.notificationId, entry);
        entries.push(entry);
      }
      head.readTo = readTo;
    },
    take() {
      const entry = ready.shift();
      if (!entry) return undefined;
      entry.state = 'sending';
      sending.set(entry.message, entry);
      return entry.message;
    },
    finish(message, result) {
      const entry = sending.get(message);
      if (!entry) return;
      sending.delete(message);
      entry.state = 'settled';
      entry.result = result;
      entry.waits = result.outcome.kind === 'retry';
      release(entry);
    },
    settled(now) {
      let count = 0;
      while (count < entries.length && entries[count]?.state === 'settled') count += 1;
      if (count === 0 && entries.length > 0) return undefined;
      const to = count === entries.length ? head.readTo : (entries[count - 1] as Entry).cursor;
      if (to === head.cursor) return undefined;
      const attempts: NewAttempt[] = [];
      const waiting: WaitingMessage[] = [];
      for (const { message, result, waits } of entries.slice(0, count)) {
        const { id, callbackId: cb, notificationId, body, createdAt, traceContext } = message;
        if (result) attempts.push(attemptOf(result));
        if (waits) {
          const retry = result?.outcome.kind === 'retry' ? result.outcome.retryAt : now;
          waiting.push({
            id,
            callbackId: cb,
            notificationId,
            body,
            attempts: result ? 1 : 0,
            dueAt: retry,
            createdAt,
            ...(traceContext === undefined ? {} : { traceContext }),
          });
        }
      }
      return { to, progress: { attempts, waiting }, count };
    },
    recorded({ to, count }) {
      for (const entry of entries.splice(0, count)) {
        if (lastOf.get(entry.message.notificationId) === entry) lastOf.delete(entry.message.notificationId);
      }
      head.cursor = to;
    },
  };
  return head;
}
