import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { INBOX_COUNTS, INBOX_EVENT_TYPES } from '../notifications/model.ts';
import type { StatusHub } from '../notifications/stream-hub.ts';
import type { Store } from '../store/port/index.ts';
import type { LoggedStatus } from '../store/port/status-log.ts';
import { countsView, itemView } from './schemas.ts';

/** How far back a reconnecting client is caught up: the last 24 hours, as the status stream. */
const REPLAY_MS = 24 * 60 * 60 * 1000;
/** Log events one catch-up read gives at most. */
const PAGE = 1000;
/**
 * The events of a recipient's messages its streams hear of (a DELIVERED one only from the inbox):
 * what the reader did, and INBOX_COUNTS, logged by unread and unarchive for the counts alone.
 */
const READING_EVENTS = new Set<string>([...INBOX_EVENT_TYPES, INBOX_COUNTS]);

/** One open inbox stream, as small as it can be: 10,000 of them live in one process. */
export interface InboxStream {
  tenant: string;
  recipientId: string;
  /** Writes SSE text; false once the client is gone (or was cut for not reading). */
  write(text: string): boolean;
  /** Ends the stream with a last comment line. */
  end(comment: string): void;
  readonly closed: boolean;
  /** Whether its access token still verifies (asked at each heartbeat). */
  stillValid(): Promise<boolean>;
}

/** The inbox streams of this process, fed by its one reader of the status log (stream-hub.ts). */
export interface InboxHub {
  /**
   * Starts the stream: after `after` (a Last-Event-ID) it first gets the messages of the last 24
   * hours it missed, then, like a new stream, the inbox's counts, then every change live. Resolves
   * once it is live; call the result to stop it.
   */
  subscribe(stream: InboxStream, after?: string): Promise<() => void>;
  /**
   * The recipient's counts changed (an action served here): its streams here hear of it at once,
   * before the log's event (SEEN, READ, ARCHIVED or INBOX_COUNTS) reaches every process's.
   */
  countsChanged(tenant: string, recipientId: string): void;
  /** How many streams are open (tests, metrics). */
  readonly size: number;
  /** How many streams the recipient holds open in this process. */
  held(tenant: string, recipientId: string): number;
  close(): Promise<void>;
}

export interface InboxHubDeps {
  store: Store;
  clock: Clock;
  log: Logger;
  statusHub: StatusHub;
  /** The comment line and token check of every stream, in one pass: HERALD_STREAM_HEARTBEAT_MS. */
  heartbeatMs: number;
  /** What a stream whose token expired ends with (stream-protocol.ts). */
  tokenEndedComment: string;
}

/** One recipient's streams in this process; its deliveries run one after another, in log order. */
interface Group {
  tenant: string;
  recipientId: string;
  /** Its live streams: those an event goes to. */
  streams: Set<Entry>;
  /** Its streams, live or catching up: the group lives while it holds one. */
  held: number;
  chain: Promise<void>;
}

interface Entry {
  stream: InboxStream;
  /** A Last-Event-ID ahead of this process's reader (another process's was further on, PostgreSQL). */
  floor?: string;
}

const keyOf = (tenant: string, recipientId: string) => `${tenant}\n${recipientId}`;
const messageFrame = (cursor: string, data: unknown) =>
  `event: message\nid: ${cursor}\ndata: ${JSON.stringify(data)}\n\n`;
/** Counts with an id only where every earlier event has been sent: an id says "all up to here". */
const countsFrame = (cursor: string | undefined, data: unknown) =>
  `event: counts\n${cursor === undefined ? '' : `id: ${cursor}\n`}data: ${JSON.stringify(data)}\n\n`;

/** Whether a log event concerns an inbox's streams: a message stored in it, or one seen, read or archived. */
const inboxEvent = (row: LoggedStatus) =>
  row.inboxRecipient !== null &&
  (READING_EVENTS.has(row.type) || (row.type === 'DELIVERED' && row.source === 'inbox'));

/**
 * The inbox streams of a process. A log event reaches only its recipient's streams, found in one
 * map lookup (tenant and recipient), never by looking at every open stream: the status hub's one
 * reader gives each page of the log to `onPage`, which looks up each inbox event's group. Each
 * group's deliveries are chained, so its streams get its events in log order; a message's item is
 * read from the store once per group and serialised once for all of its streams.
 *
 * No gap and no duplicate on reconnect, as stream-hub.ts does it: a stream behind the reader
 * catches up from the log until one of its reads ends at the reader's position, then joins its
 * group synchronously, before the reader can move; later events reach it live.
 *
 * Per stream the hub keeps one small entry; the comment lines of every stream are written by one
 * timer, and no stream has a buffer of its own here (the socket's is cut at a bound, stream-route.ts).
 */
export function createInboxHub(deps: InboxHubDeps): InboxHub {
  const { store, statusHub } = deps;
  const log = store.statusLog;
  const groups = new Map<string, Group>();
  const all = new Set<Entry>();
  let unwatch: (() => void) | undefined;
  let watching: Promise<void> | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  /** Set by close(): a stream or a watch that finishes starting afterwards ends at once. */
  let shut = false;

  function send(group: Group, work: (targets: Entry[]) => Promise<void>, targets: Entry[]): void {
    group.chain = group.chain.then(
      () => work(targets),
      () => work(targets),
    );
    group.chain.catch((error) => deps.log.warn({ err: error }, 'inbox stream: a delivery failed'));
  }

  /** Writes `frames` (each with its cursor) to the targets, skipping for each what its floor covers. */
  function write(targets: Entry[], frames: Array<{ cursor: string; text: string }>): void {
    const whole = frames.map((f) => f.text).join('');
    for (const entry of targets) {
      if (entry.stream.closed) continue;
      if (entry.floor === undefined) {
        entry.stream.write(whole);
        continue;
      }
      const floor = entry.floor;
      const fresh = frames.filter((f) => log.compare(f.cursor, floor) > 0);
      if (fresh.length === frames.length) entry.floor = undefined;
      if (fresh.length > 0) entry.stream.write(fresh.map((f) => f.text).join(''));
    }
  }

  /** The frames of a group's events of one page: its new messages, then its counts once. */
  async function deliver(group: Group, rows: LoggedStatus[], targets: Entry[]): Promise<void> {
    const frames: Array<{ cursor: string; text: string }> = [];
    for (const row of rows) {
      if (row.type !== 'DELIVERED') continue;
      const message = await store.inbox.get(group.tenant, group.recipientId, row.notificationId);
      if (message) frames.push({ cursor: row.cursor, text: messageFrame(row.cursor, itemView(message)) });
    }
    const last = (rows.at(-1) as LoggedStatus).cursor;
    const counts = countsView(await store.inbox.counts(group.tenant, group.recipientId));
    frames.push({ cursor: last, text: countsFrame(last, counts) });
    write(targets, frames);
  }

  /** One page of the log from the status hub's reader, synchronously (see above). */
  function onPage(rows: readonly LoggedStatus[]): void {
    let touched: Map<Group, LoggedStatus[]> | undefined;
    for (const row of rows) {
      if (!inboxEvent(row)) continue;
      const group = groups.get(keyOf(row.tenant, row.inboxRecipient as string));
      if (!group) continue;
      touched ??= new Map();
      const list = touched.get(group);
      if (list) list.push(row);
      else touched.set(group, [row]);
    }
    if (!touched) return;
    // The streams an event goes to are those in the group now: one joining later had it in its catch-up.
    for (const [group, events] of touched)
      send(group, (targets) => deliver(group, events, targets), [...group.streams]);
  }

  function beat(): void {
    for (const entry of all) {
      entry.stream.stillValid().then(
        (valid) => {
          if (entry.stream.closed) return;
          if (valid) entry.stream.write(': ping\n\n');
          else entry.stream.end(deps.tokenEndedComment);
        },
        () => undefined,
      );
    }
  }

  async function startWatching(): Promise<void> {
    if (unwatch) return;
    watching ??= statusHub.watch(onPage).then((stop) => {
      // Closed while the watch was starting: nothing may keep watching (or the process alive).
      if (shut) return stop();
      unwatch = stop;
      heartbeat = setInterval(beat, deps.heartbeatMs);
      heartbeat.unref();
    });
    try {
      await watching;
    } finally {
      watching = undefined;
    }
  }

  function stopIfIdle(): void {
    if (all.size > 0 || !unwatch) return;
    clearInterval(heartbeat);
    heartbeat = undefined;
    unwatch();
    unwatch = undefined;
  }

  function groupOf(tenant: string, recipientId: string): Group {
    const key = keyOf(tenant, recipientId);
    let group = groups.get(key);
    if (!group) {
      group = { tenant, recipientId, streams: new Set(), held: 0, chain: Promise.resolve() };
      groups.set(key, group);
    }
    group.held += 1;
    return group;
  }

  /**
   * Makes the entry live at the reader's position `cursor` and queues its first counts, both
   * synchronously: an event the reader passes on after this goes to the group's chain behind them.
   */
  function join(entry: Entry, group: Group, cursor: string | undefined): void {
    group.streams.add(entry);
    sendCounts(group, [entry], cursor);
  }

  /** Sends the entry the messages it missed after `after`, up to the reader's position, then joins it live. */
  async function catchUp(entry: Entry, group: Group, after: string): Promise<void> {
    const since = deps.clock.now() - REPLAY_MS;
    let from = after;
    for (;;) {
      if (entry.stream.closed) return;
      const until = statusHub.position();
      if (until === undefined) return;
      if (log.compare(from, until) >= 0) {
        // Synchronously with the check: the reader has given nothing after `until` to anyone yet.
        join(entry, group, until);
        return;
      }
      const { rows, readTo } = await log.read(from, {
        until,
        since,
        tenants: [group.tenant],
        types: ['DELIVERED'],
        limit: PAGE,
      });
      let frames = '';
      for (const row of rows) {
        if (row.inboxRecipient !== group.recipientId || row.source !== 'inbox') continue;
        const message = await store.inbox.get(group.tenant, group.recipientId, row.notificationId);
        if (message) frames += messageFrame(row.cursor, itemView(message));
      }
      if (frames) entry.stream.write(frames);
      from = readTo;
    }
  }

  function remove(entry: Entry, group: Group): void {
    if (!all.delete(entry)) return;
    group.streams.delete(entry);
    group.held -= 1;
    // Deliveries already chained end on their own, writing to no one.
    if (group.held === 0) groups.delete(keyOf(group.tenant, group.recipientId));
    stopIfIdle();
  }

  /** The counts now, to `targets`, in the group's order; with an id only when `cursor` is given. */
  function sendCounts(group: Group, targets: Entry[], cursor: string | undefined): void {
    send(
      group,
      async (to) => {
        const counts = countsView(await store.inbox.counts(group.tenant, group.recipientId));
        const text = countsFrame(cursor, counts);
        for (const entry of to) if (!entry.stream.closed) entry.stream.write(text);
      },
      targets,
    );
  }

  return {
    get size() {
      return all.size;
    },
    held: (tenant, recipientId) => groups.get(keyOf(tenant, recipientId))?.held ?? 0,
    async subscribe(stream, after) {
      const entry: Entry = { stream };
      all.add(entry);
      const group = groupOf(stream.tenant, stream.recipientId);
      const stop = () => remove(entry, group);
      try {
        await startWatching();
        const position = statusHub.position() as string;
        if (after !== undefined && log.compare(after, position) < 0) await catchUp(entry, group, after);
        else if (after !== undefined && log.compare(after, position) > 0) {
          // Ahead of this reader (another process's was further on): nothing up to it is sent again,
          // and the first counts carry no id, which would take the client back.
          entry.floor = after;
          join(entry, group, undefined);
        } else join(entry, group, position);
      } catch (error) {
        stop();
        throw error;
      }
      // Closed while this stream was starting: close() did not see it, so it ends here.
      if (shut) {
        stop();
        stream.end(': the server is shutting down');
      }
      return stop;
    },
    countsChanged(tenant, recipientId) {
      const group = groups.get(keyOf(tenant, recipientId));
      if (group) sendCounts(group, [...group.streams], undefined);
    },
    async close() {
      shut = true;
      for (const entry of all) entry.stream.end(': the server is shutting down');
      all.clear();
      groups.clear();
      stopIfIdle();
      clearInterval(heartbeat);
      unwatch?.();
      unwatch = undefined;
    },
  };
}
