/** Small statistics helpers for the bench: medians of rounds and latency percentiles. */

/** The median of the values (the mean of the middle two for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The p-th percentile (0..100) by nearest rank, as latency tools report it; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

/** p50, p99 and max of a set of latencies in ms, for a note. */
export function spread(values: readonly number[]): string {
  return `p50 ${percentile(values, 50)} ms, p99 ${percentile(values, 99)} ms, max ${Math.max(...values)} ms`;
}

/** Rounds to a number of significant digits, for readable figures in the table and JSON. */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value) || value === 0) return value;
  const magnitude = Math.floor(Math.log10(Math.abs(value)));
  const factor = 10 ** Math.max(0, digits - 1 - magnitude);
  return Math.round(value * factor) / factor;
}
