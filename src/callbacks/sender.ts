import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { openPrivateKey } from '../auth/key-crypto.ts';
import type { Clock } from '../clock.ts';
import { createRateWindow, type RateLimiter } from '../dispatch/rate-window.ts';
import { refusedUrl } from '../providers/outbound.ts';
import type {
  CallbackRecord,
  FinishedAttempt,
  LeasedMessage,
  MessageOutcome,
} from '../store/port/callbacks.ts';
import type { Store } from '../store/port/index.ts';
import { FANOUT_PAGE, fanOutStep } from './fanout.ts';
import { CALLBACK_TIMEOUT_MS } from './post.ts';
import { createThreadedPoster } from './threaded-poster.ts';

/** Messages are retried for this long after the status change, then given up. */
const CALLBACK_RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** After a rotation the old secret still signs (a second signature) for this long. */
const PREVIOUS_SECRET_MS = 24 * 60 * 60 * 1000;
/** A leased message whose worker died is attempted again after this. */
const LEASE_MS = CALLBACK_TIMEOUT_MS * 3;
/**
 * Passes (commit the finished attempts, fan out, claim) run at most this often while busy: the
 * attempts of many sends share one transaction instead of an fsync each. Measured: one commit
 * per attempt on the dispatch thread's connection slowed a 100,000 drain to about 500/s.
 */
const PASS_GAP_MS = 10;
/** Delays after each failed attempt: soon once, then backing off to every two hours. */
const RETRY_DELAYS_MS = [1_000, 5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000];

function retryDelayOf(attempt: number): number {
  const base = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1] ?? 7_200_000;
  // Up to 20% jitter spreads a burst of failures.
  return Math.round(base * (1 + Math.random() * 0.2));
}

export interface CallbackSenderDeps {
  store: Store;
  clock: Clock;
  log: Logger;
  /** Hosts a callback URL may name even when private (HERALD_CALLBACK_ALLOWED_HOSTS). */
  allowedHosts: readonly string[];
  /** Opens the sealed secrets (HERALD_KEY_ENCRYPTION_SECRET). */
  keyEncryptionSecret?: string;
  /**
   * The partition of the sender between receivers (HERALD_CALLBACK_CONCURRENCY and _RATE): each
   * callback has its own requests in flight and its own rate, so a receiver that hangs uses its
   * own slots for 10 s and never another callback's.
   */
  concurrency: number;
  ratePerSecond: number;
  pollMs?: number;
}

export interface CallbackSender {
  close(): Promise<void>;
}

/** One callback's part of the sender: its messages claimed and waiting, and those in flight. */
interface Lane {
  callback: CallbackRecord;
  waiting: LeasedMessage[];
  inFlight: number;
  /** HERALD_CALLBACK_RATE, through the one rate limiter dispatch uses for providers. */
  rate: RateLimiter;
}

/** Callbacks have no priorities: every request takes the limiter's full rate (rank 0). */
const ANY = 0;

/**
 * The worker role's sender of status callbacks: fans the status log out to messages, claims
 * each callback's due messages into its own lane, and sends them signed as Standard Webhooks
 * says, within the lane's slots and rate. Finished attempts are committed together each pass.
 */
export function startCallbackSender(deps: CallbackSenderDeps): CallbackSender {
  const { store, clock, log } = deps;
  const owner = `cb-${randomUUID()}`;
  // The HTTPS requests (TLS, HTTP, signing) run in a thread of their own, never on the thread
  // that claims and commits: with one callback on a 100,000 drain, dispatch went from 0.352x to
  // 0.439x of its speed without callbacks (bench, 2 cores).
  const poster = createThreadedPoster(deps.allowedHosts);
  const lanes = new Map<string, Lane>();
  const sending = new Set<Promise<void>>();
  const opened = new Map<string, string>();
  let finished: FinishedAttempt[] = [];
  let running = false;
  let again = false;
  let lastPass = 0;
  let scheduled: NodeJS.Timeout | undefined;
  let closed = false;

  const open = (sealed: string, id: string) => {
    let plain = opened.get(sealed);
    if (plain === undefined) {
      plain = openPrivateKey(sealed, id, deps.keyEncryptionSecret);
      opened.set(sealed, plain);
    }
    return plain;
  };

  async function attempt(callback: CallbackRecord, message: LeasedMessage): Promise<FinishedAttempt> {
    const done = (outcome: MessageOutcome, statusCode: number | null, error: string | null) => ({
      message,
      outcome,
      statusCode,
      error,
    });
    const expired = clock.now() - message.createdAt >= CALLBACK_RETRY_WINDOW_MS;
    const retry = (): MessageOutcome =>
      expired ? { kind: 'failed' } : { kind: 'retry', retryAt: clock.now() + retryDelayOf(message.attempt) };
    const refused = refusedUrl(callback.url, deps.allowedHosts, 'HERALD_CALLBACK_ALLOWED_HOSTS');
    if (refused) return done({ kind: 'failed' }, null, `callback URL ${refused}`);
    const timestamp = Math.floor(clock.now() / 1000);
    const secrets = [open(callback.secret, callback.id)];
    if (
      callback.previousSecret &&
      callback.rotatedAt !== null &&
      clock.now() - callback.rotatedAt < PREVIOUS_SECRET_MS
    ) {
      secrets.push(open(callback.previousSecret, callback.id));
    }
    const { statusCode: code, error } = await poster.post({
      url: callback.url,
      messageId: message.id,
      timestamp,
      secrets,
      body: message.body,
    });
    if (code === null) return done(retry(), null, error);
    if (code >= 200 && code < 300) return done({ kind: 'delivered' }, code, null);
    // 410: the receiver is gone for good; the pass disables the callback.
    if (code === 410) return done({ kind: 'failed' }, code, null);
    return done(retry(), code, null);
  }

  /** Starts what the lane's slots and rate allow now; needs no database. */
  function pump(lane: Lane): void {
    while (lane.waiting.length > 0 && lane.inFlight < deps.concurrency && !closed && lane.rate.tryTake(ANY)) {
      const message = lane.waiting.shift() as LeasedMessage;
      lane.inFlight += 1;
      const task = attempt(lane.callback, message)
        .then((result) => {
          finished.push(result);
        })
        .finally(() => {
          lane.inFlight -= 1;
          sending.delete(task);
          pump(lane);
          kick();
        });
      sending.add(task);
    }
  }

  async function pass(): Promise<void> {
    if (finished.length > 0) {
      const batch = finished;
      finished = [];
      await store.callbacks.complete(owner, batch, clock.now());
      for (const gone of batch.filter((f) => f.statusCode === 410)) {
        await store.callbacks.disable(gone.message.callbackId, 'the receiver answered 410 Gone', clock.now());
        lanes.delete(gone.message.callbackId);
        log.warn({ callback: gone.message.callbackId }, 'callback disabled: its receiver answered 410');
      }
    }
    const callbacks = await store.callbacks.enabled();
    if (callbacks.length > 0) poster.warm();
    while ((await fanOutStep(store, clock, callbacks)) === FANOUT_PAGE && !closed);
    const enabled = new Map(callbacks.map((c) => [c.id, c]));
    for (const id of lanes.keys()) if (!enabled.has(id)) lanes.delete(id);
    const now = clock.now();
    for (const id of await store.callbacks.dueCallbacks(now, 1000)) {
      const callback = enabled.get(id);
      if (!callback || closed) continue;
      const lane = lanes.get(id) ?? {
        callback,
        waiting: [],
        inFlight: 0,
        rate: createRateWindow(clock, deps.ratePerSecond),
      };
      lane.callback = callback;
      lanes.set(id, lane);
      // Claim enough for a second at the lane's rate, beyond what it holds already.
      const room = Math.min(deps.ratePerSecond, deps.concurrency * 4) - lane.waiting.length - lane.inFlight;
      if (room > 0) lane.waiting.push(...(await store.callbacks.claim(id, owner, now, now + LEASE_MS, room)));
    }
    // Every lane, not only the ones just claimed for: one that its rate held with nothing in
    // flight has no completion to start it again, and its leased messages are not due.
    for (const lane of lanes.values()) pump(lane);
  }

  /** Runs a pass soon: at once when idle, else PASS_GAP_MS after the last one began. */
  function kick(): void {
    if (closed || scheduled) return;
    if (running) {
      again = true;
      return;
    }
    scheduled = setTimeout(run, Math.max(0, lastPass + PASS_GAP_MS - Date.now()));
  }

  async function run(): Promise<void> {
    scheduled = undefined;
    running = true;
    lastPass = Date.now();
    again = false;
    try {
      await pass();
    } catch (error) {
      log.warn({ err: error }, 'callback pass failed; retrying');
    } finally {
      running = false;
    }
    if (again) kick();
  }

  const timer = setInterval(kick, deps.pollMs ?? 200);
  timer.unref();
  kick();
  return {
    async close() {
      closed = true;
      clearInterval(timer);
      clearTimeout(scheduled);
      await Promise.allSettled([...sending]);
      // What finished is recorded; what was claimed and never sent goes back when its lease ends.
      if (finished.length > 0)
        await store.callbacks.complete(owner, finished, clock.now()).catch(() => undefined);
      await poster.close();
    },
  };
}
