/** A request for tokens from one shared token bucket (one provider's rate across all workers). */
export interface TokenRequest {
  key: string;
  want: number;
  ratePerSecond: number;
  burst: number;
}

/**
 * Provider limits shared by every worker process through the database: token buckets, so N
 * workers together keep to a provider's rate instead of N times it, and circuit breakers, so a
 * provider one worker finds failing is held back by all of them. With SQLite (one process) the
 * same tables simply have one user.
 */
export interface LimitStore {
  /**
   * Takes up to `want` whole tokens from each bucket (created full, refilled at its rate since
   * its last take, up to its burst); returns the grants in request order. Atomic per bucket.
   */
  takeTokens(requests: readonly TokenRequest[], now: number): Promise<number[]>;
  /** Publishes that a provider's circuit is open until `openUntil`; null closes it. */
  setCircuit(key: string, openUntil: number | null, now: number): Promise<void>;
  /** The circuits open at `now`: provider key and until when. */
  openCircuits(now: number): Promise<Array<{ key: string; openUntil: number }>>;
}
