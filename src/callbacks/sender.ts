import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { createRateWindow } from '../dispatch/rate-window.ts';
import type { FinishedAttempt, LeasedMessage } from '../store/port/callbacks.ts';
import type { StatusLogStore } from '../store/port/status-log.ts';
import { createAttempt } from './attempt.ts';
import { createFeeds, type Feed } from './feeds.ts';
import { createHeadLeases } from './head-lease.ts';
import { CALLBACK_TIMEOUT_MS, createPoster } from './post.ts';
import { createPruner } from './prune.ts';
import { HEAD_WINDOW, readLog } from './read-log.ts';
import type { SenderCallbacks } from './sender-store.ts';

/** A leased message whose worker died is attempted again after this. */
const LEASE_MS = CALLBACK_TIMEOUT_MS * 3;
/**
 * Passes (record what finished, read the log, claim retries) run at most this often while busy: the
 * attempts of many sends share one transaction instead of an fsync each. Measured: one commit
 * per attempt on the dispatch thread's connection slowed a 100,000 drain to about 500/s.
 */
const PASS_GAP_MS = 10;
/** Callbacks have no priorities: every request takes the limiter's full rate (rank 0). */
const ANY = 0;

export interface CallbackSenderDeps {
  callbacks: SenderCallbacks;
  statusLog: StatusLogStore;
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
  /**
   * Requests in flight to all of one tenant's callbacks together (HERALD_CALLBACK_TENANT_CONCURRENCY),
   * given to its callbacks in turn: a tenant with 20 callbacks in a burst gets no more of the
   * sender, which every tenant shares, than this, against another tenant's one callback's slots.
   */
  tenantConcurrency?: number;
  pollMs?: number;
  /**
   * Told each time the sender falls behind: a head holds half its window of unsent changes (a
   * burst), after every head had been under an eighth of it.
   */
  onBehind?(): void;
}

export interface CallbackSender {
  /** Status changes were committed: a pass runs soon (at once when idle), not at the next poll. */
  changed(): void;
  close(): Promise<void>;
}

/**
 * The worker role's sender of status callbacks (run in a thread of its own: threaded-sender.ts):
 * reads each callback's new changes from the status log (its head, leased by one worker at a
 * time) and sends them signed as Standard Webhooks says, within the callback's slots and rate; a
 * message whose attempt fails goes to the outbox, and the outbox's due messages are claimed and
 * sent the same way. What finished is recorded together, once a pass.
 */
export function startCallbackSender(deps: CallbackSenderDeps): CallbackSender {
  const { callbacks: store, clock, log } = deps;
  const owner = `cb-${randomUUID()}`;
  const poster = createPoster(deps.allowedHosts, CALLBACK_TIMEOUT_MS, deps.concurrency);
  const attempt = createAttempt(poster, clock, deps.keyEncryptionSecret);
  const heads = createHeadLeases(store, owner, log);
  const prune = createPruner(store);
  const feeds = createFeeds(
    { concurrency: deps.concurrency, tenantConcurrency: deps.tenantConcurrency ?? Number.POSITIVE_INFINITY },
    startOne,
  );
  const drop = (id: string) => {
    feeds.drop(id);
    poster.forget(id);
  };
  const sending = new Set<Promise<void>>();
  let finished: FinishedAttempt[] = [];
  let running = false;
  let again = false;
  let lastPass = 0;
  let scheduled: NodeJS.Timeout | undefined;
  let closed = false;
  let behind = false;

  /**
   * Starts one send of the feed's, a retry first, if its slots, its rate and its tenant's share
   * allow; whether it did. Needs no database.
   */
  function startOne(feed: Feed): boolean {
    const { head } = feed;
    // A receiver that answered 410 gets nothing more; the pass disables its callback.
    if (feed.gone || closed || !(feed.waiting.length > 0 || head?.hasReady())) return false;
    if (!feeds.hasRoom(feed) || !feed.rate.tryTake(ANY)) return false;
    const retry = feed.waiting.shift();
    const message = retry ?? (head?.take() as LeasedMessage);
    feeds.occupy(feed);
    const task = attempt(feed.callback, message)
      .then((result) => {
        if (result.statusCode === 410) feed.gone = true;
        if (retry) finished.push(result);
        else head?.finish(message, result);
      })
      .finally(() => {
        sending.delete(task);
        feeds.vacate(feed);
        kick();
      });
    sending.add(task);
    return true;
  }

  async function pass(): Promise<void> {
    const now = clock.now();
    if (finished.length > 0) {
      const batch = finished;
      finished = [];
      await store.complete(owner, batch, now);
    }
    for (const feed of feeds.byId.values()) if (feed.head) await heads.record(feed, now, feed.gone);
    for (const [id, feed] of feeds.byId) {
      if (!feed.gone) continue;
      await store.disable(id, 'the receiver answered 410 Gone', now);
      drop(id);
      log.warn({ callback: id }, 'callback disabled: its receiver answered 410');
    }
    const callbacks = await store.enabled();
    const enabled = new Map(callbacks.map((c) => [c.id, c]));
    for (const id of [...feeds.byId.keys()]) if (!enabled.has(id)) drop(id);
    for (const callback of callbacks) {
      const feed = feeds.byId.get(callback.id);
      if (feed) feed.callback = callback;
      else feeds.add(callback, createRateWindow(clock, deps.ratePerSecond), now);
    }
    await heads.lease(feeds.byId.values(), now);
    await readLog(deps.statusLog, store, feeds.byId.values(), now, () => closed);
    for (const id of await store.dueCallbacks(now, 1000)) {
      const feed = feeds.byId.get(id);
      if (!feed || closed) continue;
      // Claim enough for a second at the callback's rate, beyond what it holds already.
      const room = Math.min(deps.ratePerSecond, deps.concurrency * 4) - feed.waiting.length - feed.inFlight;
      if (room > 0) feed.waiting.push(...(await store.claim(id, owner, now, now + LEASE_MS, room)));
    }
    feeds.pumpAll();
    let most = 0;
    for (const feed of feeds.byId.values()) most = Math.max(most, feed.head?.size() ?? 0);
    noteBehind(most);
    await prune(now);
  }

  /** `most`: the unsent changes of the fullest head. */
  function noteBehind(most: number): void {
    const now = behind ? most >= HEAD_WINDOW / 8 : most >= HEAD_WINDOW / 2;
    if (now && !behind) deps.onBehind?.();
    behind = now;
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
    changed: kick,
    async close() {
      closed = true;
      clearInterval(timer);
      clearTimeout(scheduled);
      await Promise.allSettled([...sending]);
      // What finished is recorded; what was claimed and never sent goes back when its lease
      // ends, and a head's unsent messages are read again by whichever worker leases it next.
      const now = clock.now();
      try {
        if (finished.length > 0) await store.complete(owner, finished, now);
        for (const feed of feeds.byId.values()) {
          if (!feed.head) continue;
          await heads.record(feed, now, true);
          await heads.letGo(feed, now);
        }
      } catch {
        // Closing on a store that failed: the leases run out and the next worker sends again.
      }
      await poster.close();
    },
  };
}
