import type { RateLimiter } from '../dispatch/rate-window.ts';
import type { CallbackRecord, LeasedMessage } from '../store/port/callbacks.ts';
import { Ring } from '../turns.ts';
import type { Head } from './head.ts';

/** One callback's part of the sender: its head, its retries claimed and waiting, and its sends. */
export interface Feed {
  callback: CallbackRecord;
  /** The new changes read from the log, while this worker leases them (head-lease.ts). */
  head?: Head;
  headLeaseUntil: number;
  headRecordedAt: number;
  /** Messages from the outbox, claimed for a retry. */
  waiting: LeasedMessage[];
  inFlight: number;
  /** HERALD_CALLBACK_RATE, through the one rate limiter dispatch uses for providers. */
  rate: RateLimiter;
  /** Its tenant's share of the sender, which every feed of that tenant draws on. */
  share: TenantShare;
  /** Its receiver answered 410. */
  gone: boolean;
}

/** A tenant's part of the sender: its requests in flight, and its callbacks' feeds, in turn. */
interface TenantShare {
  tenant: string;
  inFlight: number;
  /** Its feeds, taking turns: one send each in turn. */
  turns: Ring<Feed>;
}

export interface FeedLimits {
  /** Requests in flight to one callback (HERALD_CALLBACK_CONCURRENCY). */
  concurrency: number;
  /** Requests in flight to all of one tenant's callbacks together (HERALD_CALLBACK_TENANT_CONCURRENCY). */
  tenantConcurrency: number;
}

/**
 * The sender's feeds and their slots: each callback has its own requests in flight, and a
 * tenant's callbacks together have its share, which they take in turn (a Ring, turns.ts), so a tenant
 * with 20 callbacks in a burst gets no more of the sender, which every tenant shares, than one
 * share. `start` starts one send of a feed if its rate allows and it has one ready; whether it did.
 */
export function createFeeds(limits: FeedLimits, start: (feed: Feed) => boolean) {
  const byId = new Map<string, Feed>();
  const shares = new Map<string, TenantShare>();
  /** Forgets a tenant's share once it has no feed and nothing in flight. */
  const release = (share: TenantShare) => {
    if (share.turns.size === 0 && share.inFlight === 0) shares.delete(share.tenant);
  };
  /**
   * Starts what a tenant's share allows now, one send a feed in turn, until none of its feeds
   * can start one: its callbacks share its slots evenly.
   */
  const pump = (share: TenantShare) => {
    const { turns } = share;
    for (let idle = 0; idle < turns.size; ) {
      idle = start(turns.next() as Feed) ? 0 : idle + 1;
    }
  };
  return {
    byId: byId as ReadonlyMap<string, Feed>,
    add(callback: CallbackRecord, rate: RateLimiter, now: number): void {
      let share = shares.get(callback.tenant);
      if (!share) {
        share = { tenant: callback.tenant, inFlight: 0, turns: new Ring<Feed>() };
        shares.set(callback.tenant, share);
      }
      const feed: Feed = {
        callback,
        headLeaseUntil: 0,
        headRecordedAt: now,
        waiting: [],
        inFlight: 0,
        rate,
        share,
        gone: false,
      };
      byId.set(callback.id, feed);
      share.turns.add(callback.id, feed);
    },
    drop(id: string): void {
      const feed = byId.get(id);
      if (!feed) return;
      byId.delete(id);
      feed.share.turns.delete(id);
      release(feed.share);
    },
    /** Whether the feed's slots and its tenant's share have room for one more request. */
    hasRoom: (feed: Feed) =>
      feed.inFlight < limits.concurrency && feed.share.inFlight < limits.tenantConcurrency,
    occupy(feed: Feed): void {
      feed.inFlight += 1;
      feed.share.inFlight += 1;
    },
    /** A request ended: its slot is free for its tenant's feeds, in turn. */
    vacate(feed: Feed): void {
      feed.inFlight -= 1;
      feed.share.inFlight -= 1;
      // Its tenant's last callback may have gone meanwhile.
      release(feed.share);
      pump(feed.share);
    },
    /**
     * Every tenant's feeds, not only the ones just read or claimed for: one that its rate held
     * with nothing in flight has no completion to start it again.
     */
    pumpAll(): void {
      for (const share of shares.values()) pump(share);
    },
  };
}
