/**
 * Worker slots per priority, so bulk traffic never blocks critical traffic (docs/dispatch.md).
 * With C slots: LOW may hold at most 30% of them, NORMAL and LOW together 60%, HIGH and below 90%;
 * the rest is CRITICAL's alone. CRITICAL may also go past C by its own reserve, so a CRITICAL
 * arrival is claimed at once even when every ordinary slot is busy. LOW gets nothing while a
 * higher priority has ready rows left behind (it backs up), and resumes when they drain.
 */
export interface SlotShares {
  high: number;
  normal: number;
  low: number;
  criticalExtra: number;
}

export const DEFAULT_SHARES: SlotShares = { high: 0.9, normal: 0.6, low: 0.3, criticalExtra: 0.25 };

/** In-flight sends per priority rank (0 CRITICAL..3 LOW). */
export type InFlight = readonly [number, number, number, number];

/** Per-priority limits for the next claim, plus the total HIGH+NORMAL+LOW may take together. */
export interface PriorityBudget {
  perPriority: [number, number, number, number];
  sharedLimit: number;
}

/**
 * How many rows of each priority the next claim may take. `backlog[p]` says ready rows of
 * priority p were left behind by the last claim.
 */
export function priorityBudget(
  slots: number,
  inFlight: InFlight,
  backlog: readonly boolean[],
  shares: SlotShares = DEFAULT_SHARES,
): PriorityBudget {
  const [critical, high, normal, low] = inFlight;
  const total = critical + high + normal + low;
  const free = Math.max(0, slots - total);
  // At least one slot per share, so a tiny HERALD_WORKER_CONCURRENCY still serves every priority.
  const cap = (share: number, used: number) =>
    Math.max(0, Math.min(free, Math.max(1, Math.floor(slots * share)) - used));
  const criticalRoom = Math.max(free, Math.ceil(slots * (1 + shares.criticalExtra)) - total);
  const higherBackedUp = backlog[0] === true || backlog[1] === true;
  return {
    perPriority: [
      Math.max(0, criticalRoom),
      cap(shares.high, high + normal + low),
      cap(shares.normal, normal + low),
      higherBackedUp ? 0 : cap(shares.low, low),
    ],
    sharedLimit: free,
  };
}
