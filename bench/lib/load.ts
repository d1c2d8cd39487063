import { runChild } from './proc.ts';

/** One load run: autocannon options the load worker understands. */
export interface LoadSpec {
  urls: string[];
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  seconds?: number;
  amount?: number;
  /** Requests per second from all connections together; unlimited by default. */
  overallRate?: number;
  timeoutSeconds?: number;
  /** Print a progress line every this many responses. */
  progressEvery?: number;
}

/** What the load worker reports. Latencies in ms. */
export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  latency: { mean: number; p50: number; p90: number; p99: number; max: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  samples: Array<{ status: number; body: string }>;
  /** Set by `acceptOrShed`: requests refused with 429/503 (the contract's overload answers). */
  shed?: number;
}

/** Runs bench/load-worker.ts in a child process and returns its result. */
export function runLoad(spec: LoadSpec, onProgress?: (completed: number) => void): Promise<LoadResult> {
  return runChild<LoadResult>('bench/load-worker.ts', spec, onProgress);
}

/**
 * Throws when a run got errors or statuses other than `expected`, quoting a response, so a
 * figure built from failing requests is never reported as a throughput.
 */
export function assertStatus(result: LoadResult, expected: number, what: string): void {
  const good = result.statusCodes[String(expected)] ?? 0;
  if (good === result.requests && result.errors === 0) return;
  const sample = result.samples[0];
  const detail = sample ? ` e.g. ${sample.status} ${sample.body}` : '';
  throw new Error(
    `${what}: ${good} of ${result.requests} answered ${expected}, ${result.errors} errors, ` +
      `${result.timeouts} timeouts, statuses ${JSON.stringify(result.statusCodes)}${detail}`,
  );
}

/**
 * Like assertStatus, but tolerates 429 and 503 (the contract's overload answers: "nothing was
 * stored"), counting them as shed; `rps` then counts only the accepted requests, so shedding
 * never inflates a throughput. Any other status, a connection error or nothing accepted throws.
 */
export function acceptOrShed(result: LoadResult, expected: number, what: string): LoadResult {
  const good = result.statusCodes[String(expected)] ?? 0;
  const shed = (result.statusCodes['429'] ?? 0) + (result.statusCodes['503'] ?? 0);
  if (good === 0 || good + shed !== result.requests || result.errors > 0)
    assertStatus(result, expected, what);
  return { ...result, rps: result.seconds > 0 ? good / result.seconds : 0, shed };
}
