import type { Channel } from '../channels.ts';
import type { Clock } from '../clock.ts';
import { HeraldError, type RateLimitState } from '../errors.ts';
import { rateLimitHeaders, rateLimitPolicy } from '../http/rate-limit-headers.ts';
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
  /** The RateLimit fields of an acceptance of `channel` (or the total's only); none without a quota. */
  headers(tenant: string, channel?: Channel): Readonly<Record<string, string>>;
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

/** A limit shown in the RateLimit fields: its policy, and the scope whose state it shows. */
interface Shown {
  policy: string;
  quota: number;
  windowS: 1 | 86_400;
  held: Held;
}

/**
 * What an acceptance of one channel spends from (CRITICAL and HIGH: `urgent`; NORMAL and LOW:
 * `bulk`) and shows, resolved once per quota so that an acceptance looks nothing up by name.
 */
interface Lane {
  urgent: Held[];
  bulk: Held[];
  shown: Shown[];
  /** The RateLimit-Policy field: it changes only with the limits. */
  policy: string;
}

interface TenantQuota {
  json: string;
  limits: QuotaLimits;
  updatedAt: number;
  lanes: Map<Channel, Lane>;
  /** The total's limits alone (a batch's fields). */
  total: Lane;
  held: Map<string, Held>;
  day: string;
  /** The day's usage per scope key as last read from the store (every process's). */
  stored: Map<string, number>;
  /** Admitted since the last sync, added to the metric then (a labelled increment per acceptance costs). */
  accepted: number;
}

const blockOf = (s: Scope) => {
  if (s.burst !== null) return Math.max(1, Math.ceil(s.burst * BLOCK_SHARE));
  if (s.perDay !== null) return Math.max(1, Math.ceil(s.perDay * BLOCK_SHARE));
  return COUNT_BLOCK;
};

const freshHeld = (scope: Scope): Held => ({
  scope,
  held: 0,
  leasedAt: 0,
  tokens: null,
  used: 0,
  seenAt: 0,
  nextLeaseAt: 0,
});

const NO_FIELDS: Readonly<Record<string, string>> = Object.freeze({});
const NO_HELD: Held[] = [];

/** The quota of `limits`: a Held per scope, and each channel's lanes over them. */
function tenantQuota(limits: QuotaLimits, updatedAt: number, day: string, stored: Map<string, number>) {
  const held = new Map<string, Held>();
  const heldOf = (s: Scope) => {
    let h = held.get(s.key);
    if (!h) {
      h = freshHeld(s);
      held.set(s.key, h);
    }
    return h;
  };
  const laneOf = (urgent: Scope[], bulk: Scope[]): Lane => {
    const shown = urgent.flatMap((s): Shown[] => [
      ...(s.ratePerSecond !== null
        ? [{ policy: `${s.name}-per-second`, quota: s.ratePerSecond, windowS: 1 as const, held: heldOf(s) }]
        : []),
      ...(s.perDay !== null
        ? [{ policy: `${s.name}-per-day`, quota: s.perDay, windowS: 86_400 as const, held: heldOf(s) }]
        : []),
    ]);
    return { urgent: urgent.map(heldOf), bulk: bulk.map(heldOf), shown, policy: rateLimitPolicy(shown) };
  };
  const lanes = new Map<Channel, Lane>();
  let total: Lane | undefined;
  for (const [channel, { urgent, bulk }] of scopesOf(limits)) {
    lanes.set(channel, laneOf(urgent, bulk));
    total ??= laneOf(
      urgent.filter((s) => s.name === 'total'),
      [],
    );
  }
  return {
    json: JSON.stringify(limits),
    limits,
    updatedAt,
    lanes,
    total: total as Lane,
    held,
    day,
    stored,
    accepted: 0,
  } satisfies TenantQuota;
}

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
  // What this process read from the store before a tenant's last local change is older than that
  // change: a reload whose list began before a PUT answered here must not drop or undo it.
  let changes = 0;
  const changedAt = new Map<string, number>();
  const changed = (tenant: string) => changedAt.set(tenant, ++changes);
  const changedSince = (tenant: string, since: number) => (changedAt.get(tenant) ?? 0) > since;
  /** Tenants whose quota is being removed: their rows may still show in a list. */
  const removing = new Set<string>();

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

  const countAccepted = (tenant: string, q: TenantQuota) => {
    if (q.accepted > 0) metrics?.quotaAccepted.inc({ tenant }, q.accepted);
    q.accepted = 0;
  };

  const apply = async (tenant: string, limits: QuotaLimits, updatedAt: number) => {
    const old = quotas.get(tenant);
    changed(tenant);
    // The rows stay: today's count goes on, and a lease refills a bucket by the new limits.
    if (old) {
      countAccepted(tenant, old);
      await source.giveBack(takeHeld(tenant, old), old.day);
    }
    quotas.set(tenant, tenantQuota(limits, updatedAt, utcDay(clock.now()), old?.stored ?? new Map()));
  };

  const drop = async (tenant: string) => {
    changed(tenant);
    const q = quotas.get(tenant);
    if (!q) return;
    countAccepted(tenant, q);
    quotas.delete(tenant);
    source.forget(tenant);
    metrics?.quotaUsage.remove({ tenant, scope: 'total' });
    for (const channel of Object.keys(q.limits.channels ?? {}))
      metrics?.quotaUsage.remove({ tenant, scope: channel });
  };

  const reload = async () => {
    const since = changes;
    const records = await store.list();
    // A tenant changed here since the list began keeps its change (the next reload reads it again).
    const stale = (tenant: string) => removing.has(tenant) || changedSince(tenant, since);
    const seen = new Set<string>();
    for (const r of records) {
      seen.add(r.tenant);
      if (!stale(r.tenant) && quotas.get(r.tenant)?.json !== JSON.stringify(r.limits))
        await apply(r.tenant, r.limits, r.updatedAt);
    }
    for (const tenant of [...quotas.keys()]) if (!seen.has(tenant) && !stale(tenant)) await drop(tenant);
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
      countAccepted(tenant, q);
      const returns = takeHeld(tenant, q, now - LEASE_IDLE_MS);
      if (returns.length > 0) await source.giveBack(returns, q.day);
    }
    await source.flush(day);
    await reload();
    await readUsage(day);
  };

  const used = (q: TenantQuota, h: Held) => {
    const mine = h.seenAt > 0 ? h.used - h.held : 0;
    return Math.max(mine, q.stored.get(h.scope.key) ?? 0);
  };

  const statesOf = (q: TenantQuota, shown: readonly Shown[], now: number): RateLimitState[] =>
    shown.map(({ policy, quota, windowS, held: h }) => {
      const s = h.scope;
      if (windowS === 86_400)
        return { policy, quota, windowS, remaining: quota - used(q, h), resetS: secondsToMidnight(now) };
      const burst = s.burst as number;
      const shared = h.seenAt > 0 && h.tokens !== null ? h.tokens + ((now - h.seenAt) * quota) / 1000 : burst;
      const remaining = Math.min(burst, h.held + shared);
      return { policy, quota, windowS, remaining, resetS: (burst - Math.floor(remaining)) / quota };
    });

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

  /** The lane `channel` shows (the total's alone without one). */
  const laneOf = (q: TenantQuota, channel: Channel | undefined) =>
    channel === undefined ? q.total : (q.lanes.get(channel) as Lane);

  /** Leases what `wanted` lacks: each its block, or more for a batch. */
  const lease = async (tenant: string, q: TenantQuota, wanted: Map<Held, number>, day: string) => {
    const helds = [...wanted.keys()];
    const requests = helds.map(
      (h): LeaseRequest => ({
        tenant,
        scope: h.scope.key,
        want: Math.max(blockOf(h.scope), (wanted.get(h) as number) - h.held),
        ratePerSecond: h.scope.ratePerSecond,
        burst: h.scope.burst,
        perDay: h.scope.perDay,
      }),
    );
    const grants = await source.lease(requests, day);
    const at = clock.now();
    if (q.day !== day) return;
    grants.forEach((grant, i) => {
      const h = helds[i] as Held;
      h.held += grant.granted;
      h.leasedAt = at;
      h.tokens = grant.tokens;
      h.used = grant.used;
      h.seenAt = at;
      if (grant.granted < (requests[i] as LeaseRequest).want) {
        // Short: wait for the bucket to refill a block (at most a second) before asking again.
        const s = h.scope;
        const refill = s.ratePerSecond === null ? 1000 : (1000 * blockOf(s)) / s.ratePerSecond;
        h.nextLeaseAt = at + Math.min(1000, Math.max(1, refill));
      }
    });
  };

  const refusalOf = (
    tenant: string,
    q: TenantQuota,
    h: Held,
    channel: Channel,
    refused: number,
    now: number,
  ) => {
    const s = h.scope;
    const dayOut = s.perDay !== null && h.seenAt > 0 && h.used >= s.perDay;
    metrics?.quotaRefused.inc({ tenant, limit: dayOut ? 'per-day' : 'per-second' }, refused);
    const retryAfterS = dayOut
      ? secondsToMidnight(now)
      : Math.max(1, Math.ceil((Math.max(h.nextLeaseAt, now + 1000 / (s.ratePerSecond ?? 1)) - now) / 1000));
    const what = `${s.name === 'total' ? 'its' : `its ${s.name}`}${s.bulk ? ' NORMAL and LOW' : ''} ${dayOut ? 'daily' : 'per-second'} limit`;
    return new HeraldError(
      'RATE_LIMITED',
      `The tenant ${tenant} reached ${what}; retry after ${retryAfterS} s.`,
      {
        retryAfterS,
        rateLimit: statesOf(q, laneOf(q, channel).shown, now),
      },
    );
  };

  return {
    async admit(tenant, items) {
      const q = quotas.get(tenant);
      if (!q) return { admitted: items.map(() => true) };
      const now = clock.now();
      const day = utcDay(now);
      if (q.day !== day) {
        // What was leased yesterday counted on yesterday: today starts from nothing held.
        for (const h of q.held.values()) Object.assign(h, freshHeld(h.scope));
        q.stored = new Map();
        q.day = day;
      }
      const spends = (item: QuotaItem) => {
        const lane = q.lanes.get(item.channel);
        return lane ? (item.rank <= 1 ? lane.urgent : lane.bulk) : NO_HELD;
      };
      // What each scope must hold for these items (one each for a single acceptance, the common
      // case, without counting); leased where it holds less and may ask.
      let need: Map<Held, number> | undefined;
      if (items.length !== 1) {
        need = new Map();
        for (const item of items) for (const h of spends(item)) need.set(h, (need.get(h) ?? 0) + 1);
      }
      let wanted: Map<Held, number> | undefined;
      for (const h of need ? need.keys() : spends(items[0] as QuotaItem)) {
        const n = need?.get(h) ?? 1;
        if (h.held >= n || now < h.nextLeaseAt) continue;
        wanted ??= new Map();
        wanted.set(h, n);
      }
      if (wanted) await lease(tenant, q, wanted, day);
      // Decided in one synchronous pass: concurrent admissions never spend a token twice.
      let refused: { h: Held; channel: Channel } | undefined;
      let accepted = 0;
      const admitted = items.map((item) => {
        const helds = spends(item);
        for (const h of helds) {
          if (h.held < 1) {
            refused ??= { h, channel: item.channel };
            return false;
          }
        }
        for (const h of helds) h.held -= 1;
        accepted += 1;
        return true;
      });
      q.accepted += accepted;
      if (!refused) return { admitted };
      return {
        admitted,
        refusal: refusalOf(tenant, q, refused.h, refused.channel, items.length - accepted, now),
      };
    },
    headers(tenant, channel) {
      const q = quotas.get(tenant);
      if (!q) return NO_FIELDS;
      const lane = laneOf(q, channel);
      return rateLimitHeaders(statesOf(q, lane.shown, clock.now()), lane.policy);
    },
    async put(tenant, limits) {
      const now = clock.now();
      await store.put(tenant, limits, now);
      await apply(tenant, limits, now);
      return viewOf(tenant, quotas.get(tenant) as TenantQuota);
    },
    async view(tenant) {
      const since = changes;
      const record = await store.get(tenant);
      // A change made here since the read is newer than the record: it answers.
      const newer = changedSince(tenant, since);
      if (!newer && record && quotas.get(tenant)?.json !== JSON.stringify(record.limits))
        await apply(tenant, record.limits, record.updatedAt);
      const q = newer || record ? quotas.get(tenant) : undefined;
      return q && viewOf(tenant, q);
    },
    async list() {
      await reload();
      const views = [];
      for (const [tenant, q] of quotas) views.push(await viewOf(tenant, q));
      return views.sort((a, b) => (a.tenant < b.tenant ? -1 : 1));
    },
    async remove(tenant) {
      removing.add(tenant);
      try {
        await drop(tenant);
        return await store.remove(tenant);
      } finally {
        removing.delete(tenant);
        changed(tenant);
      }
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
      for (const [tenant, q] of quotas) {
        countAccepted(tenant, q);
        await source.giveBack(takeHeld(tenant, q), q.day);
      }
      await source.flush(utcDay(clock.now()));
    },
  };
}
