import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Store } from '../store/port/index.ts';
import { changeOf, type StatusChange } from './changes.ts';

/** How far back a reconnecting client is caught up: the last 24 hours. */
const REPLAY_MS = 24 * 60 * 60 * 1000;
/** Log rows one read takes; a full page is followed at once by the next. */
const PAGE = 1000;

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
}

/** One change as an SSE `status` event; serialised once per change, whatever the streams. */
const sseFrame = (cursor: string, change: StatusChange) =>
  `event: status\nid: ${cursor}\ndata: ${JSON.stringify(change)}\n\n`;

/** Every live stream of this process, fed by one reader of the status log. */
export interface StatusHub {
  /** Starts the stream; resolves once it is live (after the replay). Call the result to stop it. */
  subscribe(subscriber: StreamSubscriber): Promise<() => void>;
  close(): Promise<void>;
}

export interface StatusHubDeps {
  store: Store;
  clock: Clock;
  log: Logger;
  /** How often the log is read while streams are open (PostgreSQL's NOTIFY wakes it sooner). */
  pollMs?: number;
}

/**
 * The process's one reader of the status log for its live streams: however many clients are
 * connected, the log is read once per poll (or NOTIFY), and each change goes to the streams of
 * its tenant. It runs only while a stream is open.
 *
 * No gap and no duplicate on reconnect: a new stream notes the reader's position H and joins at
 * once, buffering what the reader delivers after H; it replays (Last-Event-ID, H] from the log,
 * then the buffer. Reader position and delivery change together, synchronously, so every change
 * lands either in the replay or in the buffer, never in both.
 */
export function createStatusHub(deps: StatusHubDeps): StatusHub {
  const pollMs = deps.pollMs ?? 250;
  const subscribers = new Set<Entry>();
  let position: string | undefined;
  let starting: Promise<string> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let unlisten: (() => Promise<void>) | undefined;
  let reading = false;
  let again = false;
  const log = deps.store.statusLog;

  interface Entry {
    subscriber: StreamSubscriber;
    /** Frames delivered while the replay runs; undefined once live. */
    buffer?: Buffer[];
    /** This page's frames for the stream, sent together at the page's end. */
    page: string;
    /**
     * A Last-Event-ID ahead of this reader (another process's reader on PostgreSQL was further
     * on): nothing at or before it is sent, and it is dropped once the reader passes it.
     */
    floor?: string;
  }

  const wanted = (s: StreamSubscriber, tenant: string, id: string) =>
    s.tenant === tenant && (!s.notificationIds || s.notificationIds.has(id));

  async function read(): Promise<void> {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    try {
      do {
        again = false;
        if (position === undefined) return;
        const rows = await log.read(position, { limit: PAGE });
        if (subscribers.size === 0 || position === undefined) return;
        // Synchronously from here: the position moves with the deliveries (see above).
        // Tenant-wide streams (no filter, no floor) share their tenant's page, made and encoded
        // once however many of them there are; the others get a page each.
        const wide = new Set<Entry>();
        const shared = new Map<string, string[]>();
        const own: Entry[] = [];
        for (const entry of subscribers) {
          if (entry.floor === undefined && !entry.subscriber.notificationIds) {
            wide.add(entry);
            shared.set(entry.subscriber.tenant, []);
          } else own.push(entry);
        }
        for (const row of rows) {
          const change = changeOf(row);
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
            if (!wanted(entry.subscriber, row.tenant, row.notificationId)) continue;
            frame ??= sseFrame(row.cursor, change);
            entry.page += frame;
          }
        }
        const encoded = new Map<string, Buffer>();
        for (const [tenant, frames] of shared)
          if (frames.length > 0) encoded.set(tenant, Buffer.from(frames.join('')));
        for (const entry of subscribers) {
          let bytes: Buffer | undefined;
          if (wide.has(entry)) bytes = encoded.get(entry.subscriber.tenant);
          else if (entry.page) bytes = Buffer.from(entry.page);
          entry.page = '';
          if (!bytes) continue;
          if (entry.buffer) entry.buffer.push(bytes);
          else entry.subscriber.send(bytes);
        }
        const last = rows.at(-1);
        if (last) position = last.cursor;
        if (rows.length === PAGE) again = true;
      } while (again);
    } catch (error) {
      deps.log.warn({ err: error }, 'status stream: reading the status log failed; retrying');
    } finally {
      reading = false;
    }
  }

  function start(): Promise<string> {
    if (position !== undefined) return Promise.resolve(position);
    starting ??= (async () => {
      const head = await log.head();
      position = head;
      timer = setInterval(() => void read(), pollMs);
      timer.unref();
      unlisten = await deps.store.statusChanges.subscribe(() => void read());
      return head;
    })().finally(() => {
      starting = undefined;
    });
    return starting;
  }

  async function stopIfIdle(): Promise<void> {
    if (subscribers.size > 0) return;
    clearInterval(timer);
    timer = undefined;
    position = undefined;
    const stop = unlisten;
    unlisten = undefined;
    await stop?.();
  }

  async function replay(entry: Entry, after: string, until: string): Promise<void> {
    const since = deps.clock.now() - REPLAY_MS;
    let from = after;
    for (;;) {
      const rows = await log.read(from, { until, since, limit: PAGE });
      let frames = '';
      for (const row of rows) {
        const change = changeOf(row);
        if (change && wanted(entry.subscriber, row.tenant, row.notificationId))
          frames += sseFrame(row.cursor, change);
      }
      if (frames) entry.subscriber.send(Buffer.from(frames));
      const last = rows.at(-1);
      if (!last || rows.length < PAGE) return;
      from = last.cursor;
    }
  }

  return {
    async subscribe(subscriber) {
      await start();
      const until = position as string;
      const after = subscriber.after;
      const behind = after !== undefined && log.compare(after, until) < 0;
      // Behind the reader: replay up to it, buffering what it delivers meanwhile. Ahead: a floor.
      const entry: Entry = behind
        ? { subscriber, buffer: [], page: '' }
        : { subscriber, floor: after, page: '' };
      subscribers.add(entry);
      const stop = () => {
        if (subscribers.delete(entry)) void stopIfIdle();
      };
      if (behind) {
        try {
          await replay(entry, after, until);
        } catch (error) {
          stop();
          throw error;
        }
        for (const frames of entry.buffer ?? []) subscriber.send(frames);
        entry.buffer = undefined;
      }
      return stop;
    },
    async close() {
      subscribers.clear();
      await stopIfIdle();
    },
  };
}
