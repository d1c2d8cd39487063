/** One limit of a tenant's quota: a token bucket (ratePerSecond with burst) and a UTC day's count. */
export interface QuotaLimit {
  ratePerSecond?: number;
  burst?: number;
  perDay?: number;
}

/** What an operator sets for a tenant (docs/quotas.md): in total and per channel. */
export interface QuotaLimits {
  total?: QuotaLimit;
  channels?: Partial<Record<string, QuotaLimit>>;
}

export interface QuotaRecord {
  tenant: string;
  limits: QuotaLimits;
  updatedAt: number;
}

/**
 * A lease of up to `want` tokens from one scope's shared row: its bucket (when `ratePerSecond`
 * is set; created full at `burst`) and its day (when `perDay` is set). A scope without either only
 * counts what it grants.
 */
export interface LeaseRequest {
  tenant: string;
  scope: string;
  want: number;
  ratePerSecond: number | null;
  burst: number | null;
  perDay: number | null;
}

/** What a lease granted, and what the row holds after it (tokens: null without a bucket). */
export interface LeaseGrant {
  granted: number;
  tokens: number | null;
  used: number;
}

/**
 * A lease's rule: the one-process buckets in memory follow it (SQLite, quotas/sources.ts) and
 * PostgreSQL's UPDATE states the same in SQL: the bucket refills at `ratePerSecond` since `refilledAt` up to
 * `burst`, and the grant is the least of what was asked, the whole tokens and the day's rest.
 * Answers the grant and the tokens left (null: no bucket).
 */
export function grantOf(
  r: LeaseRequest,
  bucket: { tokens: number; refilledAt: number; used: number },
  now: number,
): { granted: number; tokens: number | null } {
  const tokens =
    r.ratePerSecond === null
      ? null
      : Math.min(
          r.burst ?? 0,
          bucket.tokens + (Math.max(0, now - bucket.refilledAt) * r.ratePerSecond) / 1000,
        );
  const granted = Math.max(
    0,
    Math.min(
      r.want,
      tokens === null ? r.want : Math.floor(tokens),
      r.perDay === null ? r.want : r.perDay - bucket.used,
    ),
  );
  return { granted, tokens: tokens === null ? null : tokens - granted };
}

/** Unspent leased tokens handed back: to the bucket (up to `burst`) and off the day's count. */
export interface LeaseReturn {
  tenant: string;
  scope: string;
  tokens: number;
  burst: number | null;
}

/**
 * Per-tenant quotas (src/quotas): the limits, each scope's daily count, and how the tokens are kept
 * (`tokens`): on PostgreSQL every api process leases from shared rows; on SQLite the one process
 * keeps its buckets in memory (quotas/sources.ts) and only adds its daily counts.
 */
export interface QuotaStore {
  put(tenant: string, limits: QuotaLimits, now: number): Promise<void>;
  get(tenant: string): Promise<QuotaRecord | undefined>;
  list(): Promise<QuotaRecord[]>;
  /** Removes the tenant's limits and its rows; false when it had none. */
  remove(tenant: string): Promise<boolean>;
  /** Each scope's usage on `day`, of one tenant or of all. */
  usage(day: string, tenant?: string): Promise<Array<{ tenant: string; scope: string; used: number }>>;
  tokens: QuotaLeases | QuotaCounts;
}

/** Rows shared by processes (PostgreSQL): each leases blocks of tokens and hands back what it did not spend. */
export interface QuotaLeases {
  shared: true;
  /** Takes each request's grant atomically per row (a new `day` starts the count at 0). */
  lease(requests: readonly LeaseRequest[], now: number, day: string): Promise<LeaseGrant[]>;
  giveBack(returns: readonly LeaseReturn[], day: string): Promise<void>;
}

/** One process's counts (SQLite): its buckets are in its memory, its daily counts written here. */
export interface QuotaCounts {
  shared: false;
  /** Adds counts to the day's usage (a sync's flush). */
  addUsage(counts: ReadonlyArray<{ tenant: string; scope: string; n: number }>, day: string): Promise<void>;
}
