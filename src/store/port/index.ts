/**
 * The storage port: what Herald needs from a database, split by area. Both adapters (sqlite/,
 * postgres/) implement it and pass the same conformance suite in test/store/. Every method is
 * async so that the PostgreSQL adapter fits the same shape as the synchronous SQLite one.
 */
export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  /** Cheap liveness query for /ready. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
