/**
 * Capacity reserved for CRITICAL and HIGH at every shared resource: a provider's slots, its rate
 * and its shared buckets, and the render pool's threads (README, "Delivery"; docs/dispatch.md).
 * Of a resource's `total` units (concurrent sends, sends per rate window, render threads), LOW
 * may hold at most half and NORMAL and LOW together at most three quarters, and with two or more
 * units at least one always stays for CRITICAL and HIGH, which may use all of them. The same rule
 * sizes a provider's slots (dispatch/provider-state.ts), its rate window (dispatch/rate-window.ts),
 * its shared buckets on PostgreSQL (dispatch/shared-limits.ts) and the render threads
 * (templates/render-pool.ts), so a stalled or slow provider that bulk traffic fills still takes a
 * CRITICAL send at once, and runaway bulk renders never hold every render thread.
 *
 * A tenant's quota (quotas/model.ts, `scopesOf`) keeps the same share at acceptance: NORMAL and LOW
 * together may spend only BULK_SHARE of each of its limits (the rate, `reserveCaps(burst).bulk` of
 * the burst, `reserveCaps(perDay).bulk` of the day), CRITICAL and HIGH all of it, so a tenant's
 * bulk never uses up what its urgent traffic needs.
 */

/** A priority rank: 0 CRITICAL, 1 HIGH, 2 NORMAL, 3 LOW. */
export type Rank = number;

/** The share of a provider NORMAL and LOW together may hold, and LOW alone. */
export const BULK_SHARE = 3 / 4;
export const LOW_SHARE = 1 / 2;

/** What NORMAL and LOW together (`bulk`) and LOW alone (`low`) may hold of `total`. */
export interface ReserveCaps {
  total: number;
  bulk: number;
  low: number;
}

export function reserveCaps(total: number): ReserveCaps {
  if (total < 2) return { total, bulk: total, low: total };
  const bulk = Math.min(total - 1, Math.max(1, Math.floor(total * BULK_SHARE)));
  return { total, bulk, low: Math.min(bulk, Math.max(1, Math.floor(total * LOW_SHARE))) };
}

/** Units in use per rank (index 0 CRITICAL .. 3 LOW). */
export type Usage = readonly [number, number, number, number];

/** How many more units a send of `rank` may take now, given what each rank holds. */
export function roomFor(rank: Rank, used: Usage, caps: ReserveCaps): number {
  const [critical, high, normal, low] = used;
  const all = caps.total - (critical + high + normal + low);
  if (rank <= 1) return Math.max(0, all);
  const bulk = Math.min(all, caps.bulk - (normal + low));
  return Math.max(0, rank === 2 ? bulk : Math.min(bulk, caps.low - low));
}
