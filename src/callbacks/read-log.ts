import type { LoggedStatus, StatusLogStore } from '../store/port/status-log.ts';
import { CALLBACK_RETRY_WINDOW_MS } from './attempt.ts';
import type { Feed } from './feeds.ts';
import type { Head } from './head.ts';
import { messagesFor } from './message.ts';
import type { SenderCallbacks } from './sender-store.ts';

/** Messages of one head read and not yet recorded, at most (the log is read on as they settle). */
export const HEAD_WINDOW = 4096;
/**
 * Changes one read gives at most (the store looks at a bounded number of the log's events per
 * read), and reads per pass at most (a head catching up after a restart).
 */
const LOG_PAGE = 1000;
const PAGES_PER_PASS = 4;

/**
 * Reads the log on for every head with room, from the least read of them: callbacks that keep
 * up share each read, and the database skips the changes none of them reports (other tenants,
 * other statuses). Each head takes its callback's messages past where it had read.
 */
export async function readLog(
  log: StatusLogStore,
  store: Pick<SenderCallbacks, 'pendingAmong'>,
  feeds: Iterable<Feed>,
  now: number,
  closed: () => boolean,
): Promise<void> {
  for (let page = 0; page < PAGES_PER_PASS && !closed(); page++) {
    const reading = [...feeds].filter((f) => f.head && f.head.size() < HEAD_WINDOW);
    if (reading.length === 0) return;
    const from = reading
      .map((f) => (f.head as Head).readTo)
      .reduce((a, b) => (log.compare(a, b) <= 0 ? a : b));
    // Read up to the log's head as it is now: a page that is not full has seen all of it.
    const end = await log.head();
    if (log.compare(end, from) <= 0) return;
    const { rows, readTo, more } = await log.read(from, {
      until: end,
      limit: LOG_PAGE,
      since: now - CALLBACK_RETRY_WINDOW_MS,
      types: [...new Set(reading.flatMap((f) => f.callback.events))],
      tenants: [...new Set(reading.map((f) => f.callback.tenant))],
    });
    const bodies = new Map<LoggedStatus, string | null>();
    for (const feed of reading) {
      const head = feed.head as Head;
      if (log.compare(readTo, head.readTo) <= 0) continue;
      const fresh = rows.filter((row) => log.compare(row.cursor, head.readTo) > 0);
      const messages = messagesFor(feed.callback, fresh, bodies);
      const ids = [...new Set(messages.map((m) => m.message.notificationId))];
      const pending = await store.pendingAmong(feed.callback.id, ids);
      // The lease may have gone while reading: the head is then another worker's.
      if (feed.head === head) head.add(messages, readTo, pending);
    }
    if (!more) return;
  }
}
