import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Store } from '../store/port/index.ts';
import type { LoggedStatus } from '../store/port/status-log.ts';
import type { WakeupChannel } from '../store/port/wakeups.ts';
import { Turns } from '../turns.ts';
import { type Report, reportOf } from './changes.ts';

/** How far back a reconnecting client is caught up: the last 24 hours. */
const REPLAY_MS = 24 * 60 * 60 * 1000;
/**
 * Changes one read gives at most (it looks at LOG_SCAN_PAGES times as many of the log's events);
 * a read that stopped at a limit is followed at once by the next.
 */
const PAGE = 1000;
/**
 * After a read that found a backlog (a full page: the log grows faster than one read a hint), the
 * next hint is acted on this long after that read ended, so that a busy log is read in full
 * pages a few times a second, not in a small page every hint; a quiet log is read at each hint.
 */
const BUSY_HINT_GAP_MS = 100;

/** One live stream: whose changes it wants and where they go. */
export interface StreamSubscriber {
  tenant: string;
  /** Only these notifications, when given. */
  notificationIds?: ReadonlySet<string>;
  /** The last change the client has (its Last-Event-ID): it gets every later one first. */
  after?: string;
  /**
   * Sends changes as SSE text in UTF-8: one or more `status` events (many at once when a page of
   * the log has several for this stream, so a busy log costs one write per stream and page).
   * Streams that want the same changes are sent the same bytes.
   */
  send(frames: Buffer): void;
  /**
   * While catching up from the log: resolves once the client has taken what it was sent (or is
   * gone), undefined when it already has. The next page is read only then, so a client far
   * behind is caught up at its own pace, one page at a time, never cut for falling behind.
   */
  taken(): Promise<void> | undefined;
  /** Whether the client has gone; a catch-up stops at once. */
  readonly closed: boolean;
}

/**
 * One change as an SSE event, serialised once per change, whatever the streams: a notification's
 * is a `status` event, a workflow run's a `workflow.run` event (decision 0035), which clients
 * listening for `status` (the web UI's) ignore.
 */
const sseFrame = (cursor: string, report: Report) =>
  `event: ${report.type === 'notification.status' ? 'status' : report.type}\nid: ${cursor}\ndata: ${JSON.stringify(report.data)}\n\n`;

/**
 * Another consumer of the reader's pages (the inbox streams, inbox/hub.ts): given each page's
 * events synchronously, before the reader's position moves past them, so that it can hand streams
 * over from a catch-up to live exactly as this hub does (see createStatusHub).
 */
export type LogWatcher = (rows: readonly LoggedStatus[]) => void;

/** Every live stream of this process, fed by one reader of the status log. */
export interface StatusHub {
  /** Starts the stream; resolves once it is live (after the replay). Call the result to stop it. */
  subscribe(subscriber: StreamSubscriber): Promise<() => void>;
  /** Keeps the reader running and gives `watcher` every page it reads from now on; call the result to stop. */
  watch(watcher: LogWatcher): Promise<() => void>;
  /** How far the reader has read (undefined while it does not run): every later event goes to the watchers. */
  position(): string | undefined;
  close(): Promise<void>;
}

export interface StatusHubDeps {
  store: Store;
  clock: Clock;
  log: Logger;
  /** How often the log is read while streams are open (PostgreSQL's NOTIFY wakes it sooner). */
  pollMs?: number;
  /**
   * Hints of committed changes, read at once: the store's (PostgreSQL's NOTIFY) unless given; on
   * SQLite the dispatch thread's, which commits the process's changes.
   */
  changes?: WakeupChannel;
}

/**
 * The process's one reader of the status log for its live streams: however many clients are
 * connected, the log is read once per poll (or NOTIFY), and each change goes to the streams of
 * its tenant. It runs only while a stream is open.
 *
 * No gap and no duplicate on reconnect: a stream behind the reader catches up on its own, reading
 * the log (with backpressure: a page at a time, once the client has taken the last) from its
 * Last-Event-ID towards the reader's position P, which moves meanwhile. When one of its reads ends
 * at P and P has not moved since, it joins the live streams at once, synchronously: the reader
 * delivers only changes after P, and reader position and delivery change together, synchronously,
 * so every change lands either in the catch-up or live, never in both. Nothing is buffered for a
 * stream that catches up, however long it takes.
 */
export function createStatusHub(deps: StatusHubDeps): StatusHub {
  const pollMs = deps.pollMs ?? 250;
  const subscribers = new Set<Entry>();
  const watchers = new Set<LogWatcher>();
  const idle = () => subscribers.size === 0 && watchers.size === 0;
  let position: string | undefined;
  let starting: Promise<string> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let unlisten: (() => Promise<void>) | undefined;
  let reading = false;
  let again = false;
  /** A hint came and has not been acted on; its read is due at `hintTimer`, or once `reading` ends. */
  let hinted = false;
  let hintTimer: NodeJS.Timeout | undefined;
  /** Whether the last read found a full page, and when it ended. */
  let busy = false;
  let readEndedAt = Number.NEGATIVE_INFINITY;
  const log = deps.store.statusLog;

  interface Entry {
    subscriber: StreamSubscriber;
    /** Catching up from the log: the reader skips it until it has reached the reader's position. */
    catchingUp: boolean;
    /** This page's frames for the stream, sent together at the page's end. */
    page: string;
    /**
     * A Last-Event-ID ahead of this reader (another process's reader on PostgreSQL was further
     * on): nothing at or before it is sent, and it is dropped once the reader passes it.
     */
    floor?: string;
  }

  /** A stream narrowed to some notifications gets their changes only: no run's. */
  const wanted = (s: StreamSubscriber, row: LoggedStatus) =>
    s.tenant === row.tenant &&
    (!s.notificationIds || (row.run === null && s.notificationIds.has(row.notificationId)));

  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

  async function read(): Promise<void> {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    busy = false;
    try {
      do {
        again = false;
        if (position === undefined) return;
        const { rows, readTo, more } = await log.read(position, { limit: PAGE });
        if (idle() || position === undefined) return;
        // Synchronously from here: the position moves with the deliveries (see above).
        // Tenant-wide streams (no filter, no floor) share their tenant's page, made and encoded
        // once however many of them there are; the others get a page each.
        const wide = new Set<Entry>();
        const shared = new Map<string, string[]>();
        const own: Entry[] = [];
        for (const entry of subscribers) {
          if (entry.catchingUp) continue;
          if (entry.floor === undefined && !entry.subscriber.notificationIds) {
            wide.add(entry);
            shared.set(entry.subscriber.tenant, []);
          } else own.push(entry);
        }
        for (const row of rows) {
          const change = reportOf(row);
          if (!change) continue;
          let frame: string | undefined;
          const tenantPage = shared.get(row.tenant);
          if (tenantPage) {
            frame = sseFrame(row.cursor, change);
            tenantPage.push(frame);
          }
          for (const entry of own) {
            if (entry.floor !== undefined) {
              if (log.compare(row.cursor, entry.floor) <= 0) continue;
              entry.floor = undefined;
            }
            if (!wanted(entry.subscriber, row)) continue;
            frame ??= sseFrame(row.cursor, change);
            entry.page += frame;
          }
        }
        const encoded = new Map<string, Buffer>();
        for (const [tenant, frames] of shared)
          if (frames.length > 0) encoded.set(tenant, Buffer.from(frames.join('')));
        for (const entry of subscribers) {
          if (entry.catchingUp) continue;
          let bytes: Buffer | undefined;
          if (wide.has(entry)) bytes = encoded.get(entry.subscriber.tenant);
          else if (entry.page) bytes = Buffer.from(entry.page);
          entry.page = '';
          if (bytes) entry.subscriber.send(bytes);
        }
        for (const watcher of watchers) {
          try {
            watcher(rows);
          } catch (error) {
            deps.log.warn({ err: error }, 'status stream: a log watcher failed');
          }
        }
        position = readTo;
        if (more) again = busy = true;
        // A backlog is read a page per turn of the event loop: requests are served in between.
        if (again) await nextTurn();
      } while (again);
    } catch (error) {
      deps.log.warn({ err: error }, 'status stream: reading the status log failed; retrying');
    } finally {
      reading = false;
      readEndedAt = performance.now();
      if (hinted) onHint();
    }
  }

  /** A hint of committed changes: a read at once, or after BUSY_HINT_GAP_MS when the log is busy. */
  function onHint(): void {
    hinted = true;
    if (reading || hintTimer) return;
    const wait = busy ? readEndedAt + BUSY_HINT_GAP_MS - performance.now() : 0;
    const go = () => {
      hintTimer = undefined;
      hinted = false;
      void read();
    };
    if (wait <= 0) go();
    else hintTimer = setTimeout(go, wait);
  }

  function start(): Promise<string> {
    if (position !== undefined) return Promise.resolve(position);
    starting ??= (async () => {
      const head = await log.head();
      position = head;
      timer = setInterval(() => void read(), pollMs);
      timer.unref();
      unlisten = await (deps.changes ?? deps.store.statusChanges).subscribe(onHint);
      return head;
    })().finally(() => {
      starting = undefined;
    });
    return starting;
  }

  async function stopIfIdle(): Promise<void> {
    if (!idle()) return;
    clearInterval(timer);
    timer = undefined;
    clearTimeout(hintTimer);
    hintTimer = undefined;
    hinted = false;
    position = undefined;
    const stop = unlisten;
    unlisten = undefined;
    await stop?.();
  }

  // Catch-ups take turns, one page at a time, each page in a turn of the event loop of its
  // own: a hundred streams far behind cost this loop one page's work between two turns of it,
  // not a hundred pages' back to back before it serves another request. Tenants take turns, and
  // each tenant's streams in order among themselves, so a tenant catching up two hundred streams
  // delays another tenant's one by a page, not by two hundred.
  const turns = new Turns<() => void>();
  let turnTaken = false;
  const passTurn = () => {
    const next = turns.shift();
    if (next) next();
    else turnTaken = false;
  };
  async function inTurn<T>(tenant: string, step: () => Promise<T>): Promise<T> {
    if (turnTaken) await new Promise<void>((resolve) => turns.push(tenant, resolve));
    turnTaken = true;
    try {
      return await step();
    } finally {
      setImmediate(passTurn);
    }
  }

  /** Whether `entry` still wants changes from the hub that holds it. */
  const active = (entry: Entry) => subscribers.has(entry) && !entry.subscriber.closed;

  /**
   * Sends `entry` what it missed after `after` (the last 24 hours of it), then makes it live (see
   * above). Returns early when the client goes or the hub closes.
   */
  async function catchUp(entry: Entry, after: string): Promise<void> {
    const since = deps.clock.now() - REPLAY_MS;
    const tenants = [entry.subscriber.tenant];
    let from = after;
    while (active(entry) && position !== undefined) {
      const until = position;
      if (log.compare(from, until) >= 0) {
        entry.catchingUp = false;
        return;
      }
      const page = await inTurn(entry.subscriber.tenant, async () => {
        // A client that went while this waited for its turn costs no read.
        if (!active(entry)) return { frames: '', next: from };
        const { rows, readTo } = await log.read(from, { until, since, tenants, limit: PAGE });
        let frames = '';
        for (const row of rows) {
          const change = reportOf(row);
          if (change && wanted(entry.subscriber, row)) frames += sseFrame(row.cursor, change);
        }
        return { frames, next: readTo };
      });
      from = page.next;
      if (!page.frames || !active(entry)) continue;
      entry.subscriber.send(Buffer.from(page.frames));
      await entry.subscriber.taken();
    }
  }

  return {
    async subscribe(subscriber) {
      await start();
      const after = subscriber.after;
      const behind = after !== undefined && log.compare(after, position as string) < 0;
      // Behind the reader: catch up from the log. Ahead: a floor.
      const entry: Entry = behind
        ? { subscriber, catchingUp: true, page: '' }
        : { subscriber, catchingUp: false, floor: after, page: '' };
      subscribers.add(entry);
      const stop = () => {
        if (subscribers.delete(entry)) void stopIfIdle();
      };
      if (behind) {
        try {
          await catchUp(entry, after);
        } catch (error) {
          stop();
          throw error;
        }
      }
      return stop;
    },
    async watch(watcher) {
      watchers.add(watcher);
      await start();
      return () => {
        if (watchers.delete(watcher)) void stopIfIdle();
      };
    },
    position: () => position,
    async close() {
      subscribers.clear();
      watchers.clear();
      await stopIfIdle();
    },
  };
}
