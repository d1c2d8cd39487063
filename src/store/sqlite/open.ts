import { chmodSync, closeSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { madeOnce } from '../../made-once.ts';

/** The better-sqlite3 methods the adapter uses, and no others. */
export type SqliteDb = Pick<
  Database.Database,
  'prepare' | 'transaction' | 'pragma' | 'exec' | 'close' | 'open'
>;

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

/**
 * The page cache of the connection that claims: 32 MiB holds the hot index pages of a
 * million-row backlog, so `npm run bench -- --scenario claim` stays flat (1.11x from 10k to 1M
 * ready), and peak RSS with 1M queued fell from 320 MB (64 MiB cache) to 261 MB. A connection
 * that never claims (the main thread's, beside a dispatch thread) needs far less.
 */
const QUEUE_CACHE_MIB = 32;
export const READER_CACHE_MIB = 8;
/** The database file under HERALD_DATA_DIR. */
export const SQLITE_FILE = 'herald.db';

/**
 * Opens (creating if needed) the database file under `dataDir` with the durability Herald promises:
 * WAL with synchronous=FULL, so a committed transaction survives a power cut; group commit keeps
 * that to one fsync per batch rather than per request.
 */
export function openSqlite(dataDir: string, fileName = SQLITE_FILE, cacheMiB = QUEUE_CACHE_MIB): SqliteDb {
  const file = join(dataDir, fileName);
  ownerOnly(dataDir, file);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.pragma(`cache_size = -${cacheMiB * 1024}`);
  db.pragma('temp_store = MEMORY');
  migrate(db);
  return db;
}

/**
 * The data directory 0700 and the database files 0600: they hold the signing keys, the users and
 * every recipient. The database file is made before SQLite opens it, because SQLite gives its
 * -wal and -shm files the database file's mode. An existing directory or file is tightened too,
 * where this process may (it may not own a directory it was given).
 */
function ownerOnly(dataDir: string, file: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  closeSync(openSync(file, 'a', 0o600));
  for (const [path, mode] of [
    [dataDir, 0o700],
    [file, 0o600],
    [`${file}-wal`, 0o600],
    [`${file}-shm`, 0o600],
  ] as const) {
    try {
      chmodSync(path, mode);
    } catch {
      // Missing (-wal, -shm before the first write) or not ours: nothing to tighten.
    }
  }
}

/**
 * Runs the worker's own transactions (the queue's and the callback sender's) with synchronous=NORMAL
 * instead of FULL. In WAL mode a NORMAL commit survives a process crash (kill -9: the frames are in
 * the OS already); only a power cut can lose the latest ones, and what they held (claims,
 * completions, renewals, a callback's place in the log) is redone by at-least-once delivery: the
 * row is still ready or leased, or the log is read again from the older place. Acceptance keeps
 * FULL (a 201 must survive a power cut), and its next fsync of the WAL flushes these frames too.
 * Measured on the dev VM: a FULL commit waits ~4.5 ms for fsync, a NORMAL one ~0.1 ms, which is
 * most of a claim's latency and of the worker's per-cycle cost.
 */
export function relaxedSync(db: SqliteDb) {
  const level = db.prepare('PRAGMA synchronous').pluck();
  const normal = db.prepare('PRAGMA synchronous = NORMAL');
  const full = db.prepare('PRAGMA synchronous = FULL');
  return <T>(work: () => T): T => {
    // 2 = FULL, 3 = EXTRA; anything lower (a bench's OFF) is left as it is.
    if ((level.get() as number) < 2) return work();
    normal.run();
    try {
      return work();
    } finally {
      full.run();
    }
  };
}

/**
 * Applies every `migrations/NNN_name.sql` not applied yet, in name order, all in one transaction:
 * all or none, and one fsync rather than one per file (a fresh database has 17 of them).
 */
export function migrate(db: SqliteDb): void {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)',
  );
  const applied = new Set(
    db
      .prepare('SELECT name FROM schema_migrations')
      .all()
      .map((row) => (row as { name: string }).name),
  );
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((name) => name.endsWith('.sql'))
    .sort();
  const pending = files.filter((name) => !applied.has(name));
  if (pending.length === 0) return;
  db.transaction(() => {
    const record = db.prepare('INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)');
    for (const name of pending) {
      db.exec(readFileSync(new URL(name, MIGRATIONS_DIR), 'utf8'));
      record.run(name, Date.now());
    }
  })();
}

/**
 * `prepare` run once per database: statements that several callers use inside one another's
 * transactions (a report's suppression, a claim's look-up) are prepared once and shared.
 */
export const preparedOnce = <T>(prepare: (db: SqliteDb) => T): ((db: SqliteDb) => T) =>
  madeOnce(new WeakMap<SqliteDb, T>(), prepare);
