import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { openPrivateKey } from '../auth/key-crypto.ts';
import type { Clock } from '../clock.ts';
import { createRateWindow, type RateLimiter } from '../dispatch/rate-window.ts';
import type {
  CallbackRecord,
  FinishedAttempt,
  LeasedMessage,
  MessageOutcome,
} from '../store/port/callbacks.ts';
import type { LoggedStatus, StatusLogStore } from '../store/port/status-log.ts';
import { createHead, type Head } from './head.ts';
import { messagesFor } from './message.ts';
import { CALLBACK_TIMEOUT_MS, createPoster } from './post.ts';
import type { SenderCallbacks } from './sender-store.ts';

/** Messages are retried for this long after the status change, then given up. */
const CALLBACK_RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** After a rotation the old secret still signs (a second signature) for this long. */
const PREVIOUS_SECRET_MS = 24 * 60 * 60 * 1000;
/** A leased message whose worker died is attempted again after this. */
const LEASE_MS = CALLBACK_TIMEOUT_MS * 3;
/**
 * A callback's head whose worker died is read by another after this; renewed on every pass that
 * finds less than half of it left, so only a worker stalled this long loses it.
 */
const HEAD_LEASE_MS = 10_000;
/** Messages of one head read and not yet recorded, at most (the log is read on as they settle). */
const HEAD_WINDOW = 4096;
/**
 * Changes one read gives at most (the store looks at a bounded number of the log's events per
 * read), and reads per pass at most (a head catching up after a restart).
 */
const LOG_PAGE = 1000;
const PAGES_PER_PASS = 4;
/** A head with nothing to record still moves its place over unreported changes this often. */
const IDLE_ADVANCE_MS = 1000;
/**
 * Attempts (GET /callbacks/{id}/deliveries) and settled outbox messages are kept this long, then
 * pruned: each pass while there is more to prune, in steps of PRUNE_STEP rows a table, else once
 * an hour.
 */
const CALLBACK_HISTORY_MS = 7 * 24 * 60 * 60 * 1000;
const PRUNE_STEP = 10_000;
const PRUNE_EVERY_MS = 60 * 60 * 1000;
/**
 * Passes (record what finished, read the log, claim retries) run at most this often while busy: the
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

/** One callback's part of the sender: its head, its retries claimed and waiting, and its sends. */
interface Lane {
  callback: CallbackRecord;
  /** The new changes read from the log, while this worker leases them. */
  head?: Head;
  headLeaseUntil: number;
  headRecordedAt: number;
  /** Messages from the outbox, claimed for a retry. */
  waiting: LeasedMessage[];
  inFlight: number;
  /** HERALD_CALLBACK_RATE, through the one rate limiter dispatch uses for providers. */
  rate: RateLimiter;
  /** Its tenant's share of the sender, which every lane of that tenant draws on. */
  share: TenantShare;
  /** Its receiver answered 410. */
  gone: boolean;
}

/** A tenant's part of the sender: its requests in flight, and its lanes, served in turn. */
interface TenantShare {
  inFlight: number;
  lanes: Lane[];
  /** The lane that starts the next round. */
  turn: number;
}

/** Callbacks have no priorities: every request takes the limiter's full rate (rank 0). */
const ANY = 0;

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
  const lanes = new Map<string, Lane>();
  const shares = new Map<string, TenantShare>();
  const tenantConcurrency = deps.tenantConcurrency ?? Number.POSITIVE_INFINITY;
  const addLane = (lane: Lane) => {
    lanes.set(lane.callback.id, lane);
    lane.share.lanes.push(lane);
  };
  /** Forgets a tenant's share once it has no lane and nothing in flight. */
  const releaseShare = (tenant: string, share: TenantShare) => {
    if (share.lanes.length === 0 && share.inFlight === 0) shares.delete(tenant);
  };
  const dropLane = (id: string) => {
    const lane = lanes.get(id);
    if (!lane) return;
    lanes.delete(id);
    poster.forget(id);
    lane.share.lanes = lane.share.lanes.filter((l) => l !== lane);
    releaseShare(lane.callback.tenant, lane.share);
  };
  const shareOf = (tenant: string) => {
    let share = shares.get(tenant);
    if (!share) {
      share = { inFlight: 0, lanes: [], turn: 0 };
      shares.set(tenant, share);
    }
    return share;
  };
  const sending = new Set<Promise<void>>();
  const opened = new Map<string, string>();
  let finished: FinishedAttempt[] = [];
  let running = false;
  let again = false;
  let lastPass = 0;
  let scheduled: NodeJS.Timeout | undefined;
  let closed = false;
  let pruneAt = 0;
  let behind = false;

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
    const timestamp = Math.floor(clock.now() / 1000);
    const secrets = [open(callback.secret, callback.id)];
    if (
      callback.previousSecret &&
      callback.rotatedAt !== null &&
      clock.now() - callback.rotatedAt < PREVIOUS_SECRET_MS
    ) {
      secrets.push(open(callback.previousSecret, callback.id));
    }
    const answer = await poster.post({
      url: callback.url,
      messageId: message.id,
      timestamp,
      secrets,
      body: message.body,
      lane: callback.id,
    });
    const { statusCode: code, error } = answer;
    // A URL the outbound rules refuse is never called: the message fails without a retry.
    if (answer.refused) return done({ kind: 'failed' }, null, error);
    if (code === null) return done(retry(), null, error);
    if (code >= 200 && code < 300) return done({ kind: 'delivered' }, code, null);
    // 410: the receiver is gone for good; the pass disables the callback.
    if (code === 410) return done({ kind: 'failed' }, code, null);
    return done(retry(), code, null);
  }

  /**
   * Starts one send of the lane's, a retry first, if its slots, its rate and its tenant's share
   * allow; whether it did. Needs no database.
   */
  function startOne(lane: Lane): boolean {
    const { head, share } = lane;
    // A receiver that answered 410 gets nothing more; the pass disables its callback.
    if (lane.gone || closed || !(lane.waiting.length > 0 || head?.hasReady())) return false;
    if (lane.inFlight >= deps.concurrency || share.inFlight >= tenantConcurrency) return false;
    if (!lane.rate.tryTake(ANY)) return false;
    const retry = lane.waiting.shift();
    const message = retry ?? (head?.take() as LeasedMessage);
    lane.inFlight += 1;
    share.inFlight += 1;
    const task = attempt(lane.callback, message)
      .then((result) => {
        if (result.statusCode === 410) lane.gone = true;
        if (retry) finished.push(result);
        else head?.finish(message, result);
      })
      .finally(() => {
        lane.inFlight -= 1;
        share.inFlight -= 1;
        // Its tenant's last callback may have gone meanwhile.
        releaseShare(lane.callback.tenant, share);
        sending.delete(task);
        pump(share);
        kick();
      });
    sending.add(task);
    return true;
  }

  /**
   * Starts what a tenant's share allows now, one send a lane in turn (the lane after the last
   * round's first starts the next), so its callbacks share its slots evenly.
   */
  function pump(share: TenantShare): void {
    const { lanes: mine } = share;
    for (let started = true; started && mine.length > 0; ) {
      started = false;
      share.turn = (share.turn + 1) % mine.length;
      for (let i = 0; i < mine.length; i++) {
        if (startOne(mine[(share.turn + i) % mine.length] as Lane)) started = true;
      }
    }
  }

  /** Records the head's settled front and moves the callback's place past it. */
  async function record(lane: Lane, now: number, force = false): Promise<void> {
    const head = lane.head as Head;
    const settled = head.settled(now);
    if (!settled) return;
    const { attempts, waiting } = settled.progress;
    // Changes it does not report move its place too, but not a write every pass for them.
    if (attempts.length + waiting.length === 0 && !force && now - lane.headRecordedAt < IDLE_ADVANCE_MS)
      return;
    const until = now + HEAD_LEASE_MS;
    if (await store.advance(head.callbackId, owner, head.cursor, settled.to, settled.progress, now, until)) {
      head.recorded(settled);
      lane.headLeaseUntil = until;
      lane.headRecordedAt = now;
    } else {
      // Another worker leases it now (this one stalled past its lease) and reads from the place
      // recorded: what this one sent and did not record is sent again, with the same ids.
      lane.head = undefined;
      log.warn({ callback: head.callbackId }, 'callback head lease lost; another worker reads it');
    }
  }

  /** Takes or renews each lane's head lease; a new head starts at the callback's place. */
  async function leaseHeads(now: number): Promise<void> {
    for (const lane of lanes.values()) {
      if (lane.head && lane.headLeaseUntil - now > HEAD_LEASE_MS / 2) continue;
      const until = now + HEAD_LEASE_MS;
      const cursor = await store.leaseHead(lane.callback.id, owner, now, until);
      if (cursor === undefined) lane.head = undefined;
      else {
        if (!lane.head || lane.head.cursor !== cursor) lane.head = createHead(lane.callback.id, cursor);
        lane.headLeaseUntil = until;
      }
    }
  }

  /**
   * Reads the log on for every head with room, from the least read of them: callbacks that keep
   * up share each read, and the database skips the changes none of them reports (other tenants,
   * other statuses). Each head takes its callback's messages past where it had read.
   */
  async function readLog(now: number): Promise<void> {
    const log = deps.statusLog;
    for (let page = 0; page < PAGES_PER_PASS && !closed; page++) {
      const reading = [...lanes.values()].filter((l) => l.head && l.head.size() < HEAD_WINDOW);
      if (reading.length === 0) return;
      const from = reading
        .map((l) => (l.head as Head).readTo)
        .reduce((a, b) => (log.compare(a, b) <= 0 ? a : b));
      // Read up to the log's head as it is now: a page that is not full has seen all of it.
      const end = await log.head();
      if (log.compare(end, from) <= 0) return;
      const { rows, readTo, more } = await log.read(from, {
        until: end,
        limit: LOG_PAGE,
        since: now - CALLBACK_RETRY_WINDOW_MS,
        types: [...new Set(reading.flatMap((l) => l.callback.events))],
        tenants: [...new Set(reading.map((l) => l.callback.tenant))],
      });
      const bodies = new Map<LoggedStatus, string | null>();
      for (const lane of reading) {
        const head = lane.head as Head;
        if (log.compare(readTo, head.readTo) <= 0) continue;
        const fresh = rows.filter((row) => log.compare(row.cursor, head.readTo) > 0);
        const messages = messagesFor(lane.callback, fresh, bodies);
        const ids = [...new Set(messages.map((m) => m.message.notificationId))];
        const pending = await store.pendingAmong(lane.callback.id, ids);
        // The lease may have gone while reading: the head is then another worker's.
        if (lane.head === head) head.add(messages, readTo, pending);
      }
      if (!more) return;
    }
  }

  async function pass(): Promise<void> {
    const now = clock.now();
    if (finished.length > 0) {
      const batch = finished;
      finished = [];
      await store.complete(owner, batch, now);
    }
    for (const lane of lanes.values()) if (lane.head) await record(lane, now, lane.gone);
    for (const [id, lane] of lanes) {
      if (!lane.gone) continue;
      await store.disable(id, 'the receiver answered 410 Gone', now);
      dropLane(id);
      log.warn({ callback: id }, 'callback disabled: its receiver answered 410');
    }
    const callbacks = await store.enabled();
    const enabled = new Map(callbacks.map((c) => [c.id, c]));
    for (const id of [...lanes.keys()]) if (!enabled.has(id)) dropLane(id);
    for (const callback of callbacks) {
      const lane = lanes.get(callback.id);
      if (lane) lane.callback = callback;
      else
        addLane({
          callback,
          headLeaseUntil: 0,
          headRecordedAt: now,
          waiting: [],
          inFlight: 0,
          rate: createRateWindow(clock, deps.ratePerSecond),
          share: shareOf(callback.tenant),
          gone: false,
        });
    }
    await leaseHeads(now);
    await readLog(now);
    for (const id of await store.dueCallbacks(now, 1000)) {
      const lane = lanes.get(id);
      if (!lane || closed) continue;
      // Claim enough for a second at the lane's rate, beyond what it holds already.
      const room = Math.min(deps.ratePerSecond, deps.concurrency * 4) - lane.waiting.length - lane.inFlight;
      if (room > 0) lane.waiting.push(...(await store.claim(id, owner, now, now + LEASE_MS, room)));
    }
    // Every tenant's lanes, not only the ones just read or claimed for: one that its rate held
    // with nothing in flight has no completion to start it again.
    for (const share of shares.values()) pump(share);
    let most = 0;
    for (const lane of lanes.values()) most = Math.max(most, lane.head?.size() ?? 0);
    noteBehind(most);
    if (now >= pruneAt) {
      const pruned = await store.prune(now - CALLBACK_HISTORY_MS, PRUNE_STEP);
      pruneAt = pruned > 0 ? now : now + PRUNE_EVERY_MS;
    }
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
        for (const lane of lanes.values()) {
          if (!lane.head) continue;
          await record(lane, now, true);
          // Let go of the head at once (a lease that ends now), so a restart reads on at once.
          if (lane.head) await store.leaseHead(lane.callback.id, owner, now, now);
        }
      } catch {
        // Closing on a store that failed: the leases run out and the next worker sends again.
      }
      await poster.close();
    },
  };
}
