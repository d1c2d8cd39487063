import type { Logger } from 'pino';
import type { Feed } from './feeds.ts';
import { createHead, type Head } from './head.ts';
import type { SenderCallbacks } from './sender-store.ts';

/**
 * A callback's head whose worker died is read by another after this; renewed on every pass that
 * finds less than half of it left, so only a worker stalled this long loses it.
 */
const HEAD_LEASE_MS = 10_000;
/** A head with nothing to record still moves its place over unreported changes this often. */
const IDLE_ADVANCE_MS = 1000;

/**
 * The leases of the callbacks' heads, held by `owner` (one worker at a time reads a callback's
 * new changes), and the records that move each callback's place, fenced by the lease and the
 * place the head read from.
 */
export function createHeadLeases(store: SenderCallbacks, owner: string, log: Logger) {
  return {
    /** Takes or renews each feed's head lease; a new head starts at the callback's place. */
    async lease(feeds: Iterable<Feed>, now: number): Promise<void> {
      for (const feed of feeds) {
        if (feed.head && feed.headLeaseUntil - now > HEAD_LEASE_MS / 2) continue;
        const until = now + HEAD_LEASE_MS;
        const cursor = await store.leaseHead(feed.callback.id, owner, now, until);
        if (cursor === undefined) feed.head = undefined;
        else {
          if (!feed.head || feed.head.cursor !== cursor) feed.head = createHead(feed.callback.id, cursor);
          feed.headLeaseUntil = until;
        }
      }
    },

    /** Records the head's settled front and moves the callback's place past it. */
    async record(feed: Feed, now: number, force = false): Promise<void> {
      const head = feed.head as Head;
      const settled = head.settled(now);
      if (!settled) return;
      const { attempts, waiting } = settled.progress;
      // Changes it does not report move its place too, but not a write every pass for them.
      if (attempts.length + waiting.length === 0 && !force && now - feed.headRecordedAt < IDLE_ADVANCE_MS)
        return;
      const until = now + HEAD_LEASE_MS;
      if (
        await store.advance(head.callbackId, owner, head.cursor, settled.to, settled.progress, now, until)
      ) {
        head.recorded(settled);
        feed.headLeaseUntil = until;
        feed.headRecordedAt = now;
      } else {
        // Another worker leases it now (this one stalled past its lease) and reads from the place
        // recorded: what this one sent and did not record is sent again, with the same ids.
        feed.head = undefined;
        log.warn({ callback: head.callbackId }, 'callback head lease lost; another worker reads it');
      }
    },

    /** Lets go of the head at once (a lease that ends now), so a restart reads on at once. */
    async letGo(feed: Feed, now: number): Promise<void> {
      if (feed.head) await store.leaseHead(feed.callback.id, owner, now, now);
    },
  };
}
