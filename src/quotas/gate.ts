import type { Channel } from '../channels.ts';
import type { Clock } from '../clock.ts';
import { HeraldError, type RateLimitState } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import type { Rank } from '../reserve.ts';
import type { LeaseRequest, QuotaLimits, QuotaStore } from '../store/port/quotas.ts';
import { type QuotaView, quotaView, type Scope, scopesOf, secondsToMidnight, utcDay } from './model.ts';
import type { TokenSource } from './sources.ts';

/** How often a process reloads the quotas, hands back idle leases, flushes counts and reads usage. */
export const QUOTA_SYNC_MS = 500;
/** A lease unused this long goes back to its row, so no process sits on tokens others need. */
const LEASE_IDLE_MS = 500;
/** A lease block: this share of a limit's burst (or of its day, without a rate). */
const BLOCK_SHARE = 0.05;
/** A scope with no limit only counts; it leases this many at a time. */
const COUNT_BLOCK = 100;

/** One acceptance to admit: its channel and priority rank (0 CRITICAL .. 3 LOW). */
export interface QuotaItem {
  channel: Channel;
  rank: Rank;
}

/** Which items may be accepted, in order, and the one problem every refused item answers. */
export interface Admission {
  admitted: boolean[];
  refusal?: HeraldError;
}

/**
 * Per-tenant quotas at acceptance (docs/quotas.md). Each process spends tokens it leased from its
 * source in blocks (PostgreSQL: the shared rows; SQLite: memory); a tenant without a quota costs
 * one map look-up.
 */
export interface QuotaGate {
  /** Counts and admits `items` in order; a refused one is counted nowhere. */
  admit(tenant: string, items: readonly QuotaItem[]): Promise<Admission>;
  /** The limits of an acceptance of `channel` (or the total's only), for RateLimit fields. */
  states(tenant: string, channel?: Channel): RateLimitState[];
  put(tenant: string, limits: QuotaLimits): Promise<QuotaView>;
  view(tenant: string): Promise<QuotaView | undefined>;
  list(): Promise<QuotaView[]>;
  /** false when the tenant had no quota. */
  remove(tenant: string): Promise<boolean>;
  /** Loads the quotas and starts the periodic sync. */
  start(): Promise<void>;
  /** Stops the sync, hands back every lease and writes the counts. */
  close(): Promise<void>;
}

interface Held {
  scope: Scope;
  held: number;
  leasedAt: number;
  /** The row after this process's last lease: its bucket's tokens (null: no bucket) and the day's count. */
  tokens: number | null;
  used: number;
  seenAt: number;
  /** No lease before this: the last one came back short (its bucket or day ran out). */
  nextLeaseAt: number;
}

interface TenantQuota {
  json: string;
  limits: QuotaLimits;
  updatedAt: number;
  scopes: Map<string, { urgent: Scope[]; bulk: Scope[] }>;
  held: Map<string, Held>;
  day: string;
  /** The day's usage per scope key as last read from the store (every process's). */
  stored: Map<string, number>;
}

const blockOf = (s: Scope) => {
  if (s.burst !== null) return Math.max(1, Math.ceil(s.burst * BLOCK_SHARE));
  if (s.perDay !== null) return Math.max(1, Math.ceil(s.perDay * BLOCK_SHARE));
  return COUNT_BLOCK;
};

export interface QuotaGateDeps {
  store: QuotaStore;
  clock: Clock;
  source: TokenSource;
  metrics?: Metrics;
}

export function createQuotaGate({ store, clock, source, metrics }: QuotaGateDeps): QuotaGate {
  const quotas = new Map<string, TenantQuota>();
  let timer: NodeJS.Timeout | undefined;
  let syncing: Promise<void> | undefined;

  const heldOf = (q: TenantQuota, s: Scope) => {
    let h = q.held.get(s.key);
    if (!h) {
      h = { scope: s, held: 0, leasedAt: 0, tokens: null, used: 0, seenAt: 0, nextLeaseAt: 0 };
      q.held.set(s.key, h);
    }
    return h;
  };

  /** Takes every held token of `q` off it, to hand back. */
  const takeHeld = (tenant: string, q: TenantQuota, idleBefore = Number.POSITIVE_INFINITY) => {
    const returns = [];
    for (const h of q.held.values()) {
      if (h.held > 0 && h.leasedAt < idleBefore) {
        returns.push({ tenant, scope: h.scope.key, tokens: h.held, burst: h.scope.burst });
        h.held = 0;
      }
    }
    return returns;
  };

  const apply = async (tenant: string, limits: QuotaLimits, updatedAt: number) => {
    const old = quotas.get(tenant);
    // The rows stay: today's count goes on, and a lease refills a bucket by the new limits.
    if (old) await source.giveBack(takeHeld(tenant, old), old.day);
    quotas.set(tenant, {
      json: JSON.stringify(limits),
      limits,
      updatedAt,
      scopes: scopesOf(limits),
      held: new Map(),
      day: utcDay(clock.now()),
      stored: old?.stored ?? new Map(),
    });
  };

  const drop = async (tenant: string) => {
    const q = quotas.get(tenant);
    if (!q) return;
    quotas.delete(tenant);
    source.forget(tenant);
    metrics?.quotaUsage.remove({ tenant, scope: 'total' });
    for (const channel of Object.keys(q.limits.channels ?? {}))
      metrics?.quotaUsage.remove({ tenant, scope: channel });
  };

  const reload = async () => {
    const records = await store.list();
    const seen = new Set<string>();
    for (const r of records) {
      seen.add(r.tenant);
      if (quotas.get(r.tenant)?.json !== JSON.stringify(r.limits))
        await apply(r.tenant, r.limits, r.updatedAt);
    }
    for (const tenant of [...quotas.keys()]) if (!seen.has(tenant)) await drop(tenant);
  };

  const readUsage = async (day: string) => {
    if (quotas.size === 0) return;
    const rows = await store.usage(day);
    for (const q of quotas.values()) q.stored = new Map();
    for (const row of rows) quotas.get(row.tenant)?.stored.set(row.scope, row.used);
    if (!metrics) return;
    for (const [tenant, q] of quotas) {
      const daily = [
        ['total', q.limits.total?.perDay],
        ...Object.entries(q.limits.channels ?? {}).map(([c, l]) => [c, l?.perDay]),
      ];
      for (const [scope, perDay] of daily as Array<[string, number | undefined]>) {
        if (perDay !== undefined)
          metrics.quotaUsage.set({ tenant, scope }, (q.stored.get(scope) ?? 0) / perDay);
      }
    }
  };

  const sync = async () => {
    const now = clock.now();
    const day = utcDay(now);
    for (const [tenant, q] of quotas) {
      const returns = takeHeld(tenant, q, now - LEASE_IDLE_MS);
      if (returns.length > 0) await source.giveBack(returns, q.day);
    }
    await source.flush(day);
    await reload();
    await readUsage(day);
  };

  const used = (q: TenantQuota, key: string) => {
    const h = q.held.get(key);
    const mine = h && h.seenAt > 0 ? h.used - h.held : 0;
    return Math.max(mine, q.stored.get(key) ?? 0);
  };

  const statesOf = (q: TenantQuota, scopes: readonly Scope[], now: number): RateLimitState[] => {
    const states: RateLimitState[] = [];
    for (const s of scopes) {
      if (s.bulk) continue;
      const h = q.held.get(s.key);
      if (s.ratePerSecond !== null && s.burst !== null) {
        const shared =
          h && h.seenAt > 0 && h.tokens !== null
            ? h.tokens + ((now - h.seenAt) * s.ratePerSecond) / 1000
            : s.burst;
        const remaining = Math.min(s.burst, (h?.held ?? 0) + shared);
        states.push({
          policy: `${s.name}-per-second`,
          quota: s.ratePerSecond,
          windowS: 1,
          remaining,
          resetS: (s.burst - Math.floor(remaining)) / s.ratePerSecond,
        });
      }
      if (s.perDay !== null) {
        states.push({
          policy: `${s.name}-per-day`,
          quota: s.perDay,
          windowS: 86_400,
          remaining: s.perDay - used(q, s.key),
          resetS: secondsToMidnight(now),
        });
      }
    }
    return states;
  };

  const viewOf = async (tenant: string, q: TenantQuota): Promise<QuotaView> => {
    const now = clock.now();
    const day = utcDay(now);
    await source.flush(day);
    const rows = await store.usage(day, tenant);
    const stored = new Map(rows.map((r) => [r.scope, r.used]));
    // What this process holds was leased but not accepted: not used.
    const usedToday = (key: string) => {
      const held = q.day === day ? (q.held.get(key)?.held ?? 0) : 0;
      return Math.max(0, (stored.get(key) ?? 0) - held);
    };
    return quotaView(tenant, q.limits, q.updatedAt, day, usedToday);
  };

  return {
    async admit(tenant, items) {
      const q = quotas.get(tenant);
      if (!q) return { admitted: items.map(() => true) };
      const now = clock.now();
      const day = utcDay(now);
      if (q.day !== day) {
        // What was leased yesterday counted on yesterday: today starts from nothing held.
        q.held.clear();
        q.stored = new Map();
        q.day = day;
      }
      const listOf = (item: QuotaItem) => {
        const scopes = q.scopes.get(item.channel);
        return (item.rank <= 1 ? scopes?.urgent : scopes?.bulk) ?? [];
      };
      const demand = new Map<string, { scope: Scope; n: number }>();
      for (const item of items) {
        for (const s of listOf(item)) {
          const d = demand.get(s.key);
          if (d) d.n += 1;
          else demand.set(s.key, { scope: s, n: 1 });
        }
      }
      const wanted: Held[] = [];
      const requests: LeaseRequest[] = [];
      for (const { scope, n } of demand.values()) {
        const h = heldOf(q, scope);
        if (h.held >= n || now < h.nextLeaseAt) continue;
        wanted.push(h);
        requests.push({
          tenant,
          scope: scope.key,
          want: Math.max(blockOf(scope), n - h.held),
          ratePerSecond: scope.ratePerSecond,
          burst: scope.burst,
          perDay: scope.perDay,
        });
      }
      if (requests.length > 0) {
        const grants = await source.lease(requests, day);
        const at = clock.now();
        grants.forEach((grant, i) => {
          const h = wanted[i] as Held;
          const want = (requests[i] as LeaseRequest).want;
          if (q.day !== day) return;
          h.held += grant.granted;
          h.leasedAt = at;
          h.tokens = grant.tokens;
          h.used = grant.used;
          h.seenAt = at;
          if (grant.granted < want) {
            // Short: wait for the bucket to refill a block (at most a second) before asking again.
            const s = h.scope;
            const refill = s.ratePerSecond === null ? 1000 : (1000 * blockOf(s)) / s.ratePerSecond;
            h.nextLeaseAt = at + Math.min(1000, Math.max(1, refill));
          }
        });
      }
      // Decided in one synchronous pass: concurrent admissions never spend a token twice.
      let refused: Scope | undefined;
      const admitted = items.map((item) => {
        const scopes = listOf(item);
        const short = scopes.find((s) => heldOf(q, s).held < 1);
        if (short) {
          refused ??= short;
          return false;
        }
        for (const s of scopes) heldOf(q, s).held -= 1;
        return true;
      });
      const accepted = admitted.filter(Boolean).length;
      if (accepted > 0) metrics?.quotaAccepted.inc({ tenant }, accepted);
      if (!refused) return { admitted };
      const s = refused;
      const h = heldOf(q, s);
      const dayOut = s.perDay !== null && h.seenAt > 0 && h.used >= s.perDay;
      metrics?.quotaRefused.inc(
        { tenant, limit: dayOut ? 'per-day' : 'per-second' },
        items.length - accepted,
      );
      const retryAfterS = dayOut
        ? secondsToMidnight(now)
        : Math.max(1, Math.ceil((Math.max(h.nextLeaseAt, now + 1000 / (s.ratePerSecond ?? 1)) - now) / 1000));
      const what = `${s.name === 'total' ? 'its' : `its ${s.name}`}${s.bulk ? ' NORMAL and LOW' : ''} ${dayOut ? 'daily' : 'per-second'} limit`;
      const channel = items[admitted.indexOf(false)]?.channel;
      return {
        admitted,
        refusal: new HeraldError(
          'RATE_LIMITED',
          `The tenant ${tenant} reached ${what}; retry after ${retryAfterS} s.`,
          {
            retryAfterS,
            rateLimit: statesOf(q, channel ? listOf({ channel, rank: 0 }) : [], now),
          },
        ),
      };
    },
    states(tenant, channel) {
      const q = quotas.get(tenant);
      if (!q) return [];
      const urgent = q.scopes.get(channel ?? 'email')?.urgent ?? [];
      return statesOf(q, channel ? urgent : urgent.filter((s) => s.name === 'total'), clock.now());
    },
    async put(tenant, limits) {
      const now = clock.now();
      await store.put(tenant, limits, now);
      await apply(tenant, limits, now);
      return viewOf(tenant, quotas.get(tenant) as TenantQuota);
    },
    async view(tenant) {
      const record = await store.get(tenant);
      if (!record) return undefined;
      if (quotas.get(tenant)?.json !== JSON.stringify(record.limits))
        await apply(tenant, record.limits, record.updatedAt);
      return viewOf(tenant, quotas.get(tenant) as TenantQuota);
    },
    async list() {
      await reload();
      const views = [];
      for (const [tenant, q] of quotas) views.push(await viewOf(tenant, q));
      return views.sort((a, b) => (a.tenant < b.tenant ? -1 : 1));
    },
    async remove(tenant) {
      await drop(tenant);
      return store.remove(tenant);
    },
    async start() {
      await reload();
      timer = setInterval(() => {
        // A failed sync (the database away a moment) is the next one's to do again.
        syncing ??= sync()
          .catch(() => undefined)
          .finally(() => {
            syncing = undefined;
          });
      }, QUOTA_SYNC_MS);
      timer.unref();
    },
    async close() {
      if (timer) clearInterval(timer);
      await syncing;
      for (const [tenant, q] of quotas) await source.giveBack(takeHeld(tenant, q), q.day);
      await source.flush(utcDay(clock.now()));
    },
  };
}
