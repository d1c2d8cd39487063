import { HeraldError } from '../errors.ts';

/** Options of a group-commit batcher. */
export interface GroupCommitOptions<T, R> {
  /**
   * Writes all `items` in ONE transaction and resolves with one result per item, in order, only
   * once the transaction has committed. A rejection fails every item of the flush. `urgency`: the
   * items' (`urgency` below; 0 for the bulk), each urgency flushed apart from the others.
   */
  flush(items: T[], urgency: number): Promise<R[]>;
  /** How much one item weighs (e.g. its rows), for the limits below. Default 1. */
  weight?(item: T): number;
  /** Flush early once this much weight is pending; one flush takes at most about this much. */
  maxBatch?: number;
  /** Refuse new items (503 UNAVAILABLE, Retry-After) while this much weight waits: load shedding. */
  maxPending?: number;
  /**
   * Whose item it is (a tenant). One owner's items may weigh at most OWNER_SHARE of maxPending,
   * so one owner's flood is refused while the rest stays for everyone else.
   */
  owner?(item: T): string;
  /** What the items are, plural, in the 503 of load shedding ("notifications" unless told). */
  noun?: string;
  /**
   * How urgent an item is: 0, the bulk (the default), or more (ingest: 2 for CRITICAL rows, 1 for
   * HIGH ones). Each urgency above 0 has a queue of its own and goes out in flushes of its own, one
   * at a time, beside the others' flushes and whatever waits for them: an urgent item waits for no
   * item of another urgency, and for no flush but one of its own urgency under way.
   */
  urgency?(item: T): number;
  /** Called after each successful commit (e.g. to wake the worker). */
  afterCommit?(): void;
  /**
   * Bulk flushes that may be under way at once (default 1). More than one where the writer behind
   * `flush` commits them in the order it was called (the dispatch thread's port does) or where its
   * transactions may overlap (PostgreSQL's; no order between their commits is promised). Urgent
   * flushes are not counted here, and may commit before bulk flushes called earlier.
   */
  inFlight?: number;
}

/** The batcher's counters (tests read them through Ingest.stats). */
export interface GroupCommitStats {
  /** Transactions committed (flush calls that resolved). */
  flushes: number;
  /** Items committed. */
  items: number;
  /** Weight waiting for the next flush right now. */
  pending: number;
}

/** Gathers concurrent submissions into one transaction each tick: one fsync a batch, never one a request. */
export interface GroupCommit<T, R> {
  /** Resolves with the item's result after the transaction holding it committed. */
  submit(item: T): Promise<R>;
  stats(): GroupCommitStats;
  /** Flushes everything pending and waits for it; used on shutdown. */
  drain(): Promise<void>;
}

/** The share of maxPending one owner's waiting items may weigh. */
export const OWNER_SHARE = 1 / 2;

interface Pending<T, R> {
  item: T;
  weight: number;
  owner: string;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/** The items of one urgency waiting, the flushes of them under way, and whether one is scheduled. */
interface Lane<T, R> {
  queue: Pending<T, R>[];
  running: Set<Promise<void>>;
  scheduled: boolean;
}

/**
 * A group-commit batcher. Items submitted during one event-loop turn (every request whose body
 * was parsed in that turn) are flushed together on setImmediate; while a flush runs, new items
 * queue for the next. One flush runs at a time by default (`inFlight` 1: SQLite has one writer).
 * Handing rows to the dispatch thread keeps two in flight, so the round trip to a thread busy
 * with a claim does not idle the requests; on PostgreSQL a few overlap, each waiting for its own
 * fsync or lock while the next group is written. Each urgency above 0 has a queue and a flush of
 * its own beside those (on SQLite a flush's transaction runs at once, whole, so none overlaps).
 */
export function createGroupCommit<T, R>(options: GroupCommitOptions<T, R>): GroupCommit<T, R> {
  const maxBatch = options.maxBatch ?? 10_000;
  const maxPending = options.maxPending ?? 100_000;
  const weigh = options.weight ?? (() => 1);
  const lanes = new Map<number, Lane<T, R>>();
  const laneOf = (urgency: number): Lane<T, R> => {
    let lane = lanes.get(urgency);
    if (!lane) {
      lane = { queue: [], running: new Set(), scheduled: false };
      lanes.set(urgency, lane);
    }
    return lane;
  };
  let pendingWeight = 0;
  const pendingByOwner = new Map<string, number>();
  const ownerOf = options.owner ?? (() => '');
  const ownerCap = options.owner ? maxPending * OWNER_SHARE : maxPending;
  const inFlight = (urgency: number) => (urgency === 0 ? (options.inFlight ?? 1) : 1);
  const stats = { flushes: 0, items: 0 };

  const schedule = (urgency: number) => {
    const lane = laneOf(urgency);
    if (lane.scheduled || lane.running.size >= inFlight(urgency)) return;
    lane.scheduled = true;
    setImmediate(() => {
      lane.scheduled = false;
      const flush: Promise<void> = flushOnce(urgency).finally(() => {
        lane.running.delete(flush);
        if (lane.queue.length > 0) schedule(urgency);
      });
      lane.running.add(flush);
      if (lane.queue.length > 0) schedule(urgency);
    });
  };

  const take = (urgency: number): Pending<T, R>[] => {
    const lane = laneOf(urgency);
    const queue = lane.queue;
    let weight = 0;
    let count = 0;
    while (
      count < queue.length &&
      (count === 0 || weight + (queue[count] as Pending<T, R>).weight <= maxBatch)
    ) {
      weight += (queue[count] as Pending<T, R>).weight;
      count += 1;
    }
    const batch = queue.slice(0, count);
    lane.queue = queue.slice(count);
    pendingWeight -= weight;
    for (const p of batch) {
      const left = (pendingByOwner.get(p.owner) ?? 0) - p.weight;
      if (left > 0) pendingByOwner.set(p.owner, left);
      else pendingByOwner.delete(p.owner);
    }
    return batch;
  };

  /** One transaction for `batch`; settles every item of it, or throws without settling any. */
  async function commit(batch: Pending<T, R>[], urgency: number): Promise<void> {
    const results = await options.flush(
      batch.map((p) => p.item),
      urgency,
    );
    if (results.length !== batch.length) throw new TypeError('flush must return one result per item');
    stats.flushes += 1;
    stats.items += batch.length;
    options.afterCommit?.();
    batch.forEach((p, i) => {
      p.resolve(results[i] as R);
    });
  }

  /**
   * A commit batch is shared by unrelated requests (other tenants' among them), so one bad item
   * must not fail the others: when a batch's transaction fails, each item is tried again in a
   * transaction of its own, and only the item that fails alone is refused.
   */
  async function flushOnce(urgency: number): Promise<void> {
    const batch = take(urgency);
    if (batch.length === 0) return;
    try {
      await commit(batch, urgency);
      return;
    } catch (error) {
      if (batch.length === 1) {
        (batch[0] as Pending<T, R>).reject(error);
        return;
      }
    }
    for (const p of batch) {
      try {
        await commit([p], urgency);
      } catch (error) {
        p.reject(error);
      }
    }
  }

  const busy = () =>
    [...lanes.values()].some((lane) => lane.queue.length > 0 || lane.running.size > 0 || lane.scheduled);
  const flushing = () => [...lanes.values()].flatMap((lane) => [...lane.running]);

  return {
    submit(item) {
      const weight = weigh(item);
      const owner = ownerOf(item);
      const own = pendingByOwner.get(owner) ?? 0;
      // Whatever is waiting, one item of an owner with nothing waiting is taken, so it never waits forever.
      const full = pendingWeight > 0 && pendingWeight + weight > maxPending;
      const ownFull = own > 0 && own + weight > ownerCap;
      if (full || ownFull) {
        const noun = options.noun ?? 'notifications';
        const whose = ownFull ? `Too many of your ${noun} are` : `Too many ${noun} are`;
        return Promise.reject(
          new HeraldError('UNAVAILABLE', `${whose} waiting to be stored; retry shortly.`, { retryAfterS: 1 }),
        );
      }
      const urgency = options.urgency?.(item) ?? 0;
      return new Promise<R>((resolve, reject) => {
        laneOf(urgency).queue.push({ item, weight, owner, resolve, reject });
        pendingWeight += weight;
        pendingByOwner.set(owner, own + weight);
        schedule(urgency);
      });
    },
    stats() {
      return { ...stats, pending: pendingWeight };
    },
    async drain() {
      while (busy()) {
        const under = flushing();
        if (under.length > 0) await Promise.all(under);
        else await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}

/** Cuts the results of one flush of several multi-row items back into one array per item. */
export function resultsPerItem<R>(results: R[], sizes: number[]): R[][] {
  let offset = 0;
  return sizes.map((size) => {
    const part = results.slice(offset, offset + size);
    offset += size;
    return part;
  });
}
