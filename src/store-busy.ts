/**
 * Whether a store error says the database could not do the work now, and did none of it: the
 * statement waited too long for a lock or was cancelled, its transaction lost a deadlock or a
 * serialization conflict, or no connection could be had. Each rolls its transaction back, so
 * the API answers it `503 UNAVAILABLE` with `Retry-After` (nothing was stored; the same request
 * may succeed a moment later), not `500` (http/error-handler.ts). A connection lost in the middle
 * of a statement is not among them: it may have been lost after the commit.
 *
 * One list for both databases, read from the error's `code`:
 * - SQLite (better-sqlite3): `SQLITE_BUSY*` and `SQLITE_LOCKED*`, another connection holding
 *   the write lock past `busy_timeout` (a backup, a second process on the file);
 * - PostgreSQL (SQLSTATE): serialization failure, deadlock, lock not available (`lock_timeout`),
 *   query cancelled (`statement_timeout`), too many connections, the server starting up;
 * - postgres.js and the socket: the connection could not be opened.
 */
const TRANSIENT = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
  '57014', // query_canceled
  '53300', // too_many_connections
  '57P03', // cannot_connect_now
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
]);

export function isStoreBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return TRANSIENT.has(code) || code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
}
