import type {
  Channel,
  Content,
  EventRecord,
  NotificationRecord,
  Priority,
  Recipient,
  Status,
} from '../../notifications/model.ts';
import type { ScannedPage } from './scanned-page.ts';

/** A validated notification ready to store (status QUEUED, attempts 0). Times are epoch ms. */
export interface NewNotification {
  id: string;
  tenant: string;
  channel: Channel;
  priority: Priority;
  recipient: Recipient;
  templateKey: string | null;
  templateVersion: number | null;
  /** A canonical BCP 47 tag (templates/locale.ts), or null (none given). */
  locale?: string | null;
  content: Content | null;
  variables: Record<string, unknown> | null;
  metadata: Record<string, unknown> | null;
  idempotencyKey: string | null;
  /** sha256 of the canonical request body, compared when the key is reused. */
  requestHash: string | null;
  scheduledAt: number | null;
  expiresAt: number | null;
  createdAt: number;
  /** The recipient's keyed digest (notifications/recipient-digest.ts); null: not searchable by recipient. */
  recipientDigest?: string | null;
  /** The notification's category (docs/sending-to-people.md); absent or null: none. */
  category?: string | null;
  /**
   * The W3C `traceparent` of the span that accepted it, when that span was sampled
   * (docs/tracing.md); absent or null: not traced.
   */
  traceContext?: string | null;
}

/**
 * The columns of a new notification its request computes: the JSON ones serialized, and the
 * recipient's digest (what GET /notifications?recipient= finds it by).
 */
export interface EncodedColumns {
  recipient: string;
  content: string | null;
  variables: string | null;
  metadata: string | null;
  recipientDigest: string | null;
}

/**
 * The same columns as UTF-8 in shared memory (packColumns): what a batch thread hands on, so that
 * a 7 MiB batch crosses the API's event loop and on to the dispatch thread as one shared buffer
 * rather than as thousands of strings that each thread copies and collects. `sizes` are the byte
 * lengths of recipient, content, variables, metadata and recipientDigest in `bytes`, -1 for SQL NULL.
 */
export interface PackedColumns {
  bytes: Uint8Array;
  sizes: [number, number, number, number, number];
}

/** The fields of a new notification that are stored as JSON. */
type JsonFields = 'recipient' | 'content' | 'variables' | 'metadata';
/** The fields a request computes for its row (EncodedColumns). */
type EncodedFields = JsonFields | 'recipientDigest';

/**
 * A new notification with its JSON columns serialized (and the objects dropped, so a pending
 * group commit holds each value once). Ingest serializes each row in the request that accepted
 * it, before the row joins a group commit, so a value that cannot be serialized fails its own
 * request and never the commit shared with other requests.
 */
export type EncodedNotification = Omit<NewNotification, EncodedFields> & {
  encoded: EncodedColumns | PackedColumns;
};

/** A JSON column's value: null stays SQL NULL. */
const json = (value: unknown): string | null =>
  value === null || value === undefined ? null : JSON.stringify(value);

/** Serializes the JSON columns (throws on a value JSON cannot hold), beside the recipient's digest. */
export function encodeColumns(
  n: Pick<NewNotification, JsonFields>,
  recipientDigest: string | null,
): EncodedColumns {
  return {
    recipient: JSON.stringify(n.recipient),
    content: json(n.content),
    variables: json(n.variables),
    metadata: json(n.metadata),
    recipientDigest,
  };
}

const COLUMNS = ['recipient', 'content', 'variables', 'metadata', 'recipientDigest'] as const;

/** Packs each row's columns into one SharedArrayBuffer, one view per row (see PackedColumns). */
export function packColumns(rows: EncodedColumns[]): PackedColumns[] {
  const sizes = rows.map(
    (row) =>
      COLUMNS.map((c) =>
        row[c] === null ? -1 : Buffer.byteLength(row[c] as string),
      ) as PackedColumns['sizes'],
  );
  const total = sizes.reduce((sum, s) => sum + s.reduce((a, b) => a + Math.max(b, 0), 0), 0);
  const shared = Buffer.from(new SharedArrayBuffer(total));
  let at = 0;
  return rows.map((row, i) => {
    const start = at;
    for (const c of COLUMNS) {
      const value = row[c];
      if (value !== null) at += shared.write(value, at);
    }
    return {
      bytes: new Uint8Array(shared.buffer, start, at - start),
      sizes: sizes[i] as PackedColumns['sizes'],
    };
  });
}

/** A row's JSON columns as strings, unpacked where they are written (the store's insert). */
export function columnsOf(encoded: EncodedColumns | PackedColumns): EncodedColumns {
  if (!('sizes' in encoded)) return encoded;
  const { bytes, sizes } = encoded;
  const all = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const [recipient, content, variables, metadata, recipientDigest] = sizes.map((size) => {
    if (size < 0) return null;
    at += size;
    return all.toString('utf8', at - size, at);
  });
  return {
    recipient: recipient as string,
    content: content ?? null,
    variables: variables ?? null,
    metadata: metadata ?? null,
    recipientDigest: recipientDigest ?? null,
  };
}

/** A new notification with its JSON columns serialized (tests and tools build rows with it). */
export function encodeNotification(n: NewNotification): EncodedNotification {
  return {
    id: n.id,
    tenant: n.tenant,
    channel: n.channel,
    priority: n.priority,
    templateKey: n.templateKey,
    templateVersion: n.templateVersion,
    locale: n.locale ?? null,
    idempotencyKey: n.idempotencyKey,
    requestHash: n.requestHash,
    scheduledAt: n.scheduledAt,
    expiresAt: n.expiresAt,
    createdAt: n.createdAt,
    category: n.category ?? null,
    traceContext: n.traceContext ?? null,
    encoded: encodeColumns(n, n.recipientDigest ?? null),
  };
}

/** An earlier notification found under the same Idempotency-Key. */
export interface IdempotentHit {
  record: NotificationRecord;
  requestHash: string | null;
}

/** Filters of GET /notifications; `beforeSeq` is the decoded cursor (newest first). */
export interface NotificationFilter {
  /** Only notifications whose recipient has this digest (notifications/recipient-digest.ts). */
  recipientDigest?: string;
  /** Only the notifications this broadcast made (read through their index). */
  broadcastId?: string;
  status?: Status;
  priority?: Priority;
  channel?: Channel;
  createdAfter?: number;
  createdBefore?: number;
  beforeSeq?: number;
}

/** One list read (`list`). */
export type NotificationListPage = ScannedPage<NotificationRecord>;

/** Outcome of cancel and redrive: done, no such notification in the tenant, or the wrong status. */
export type ActionOutcome = 'done' | 'not_found' | 'invalid_state';

/** What the notifications API needs from the store (the queue side is the scheduler's port). */
export interface NotificationStore {
  /**
   * Inserts every item in ONE transaction (one commit, one fsync). An item whose
   * (tenant, idempotencyKey) already names a notification created at or after `idempotentSince`
   * is not inserted: its slot in the answer holds that notification. Older keys are released.
   */
  insertMany(
    items: EncodedNotification[],
    idempotentSince: number,
  ): Promise<Array<IdempotentHit | undefined>>;
  /**
   * How many insertMany transactions ingest may have under way at once: 1 where there is one
   * writer (SQLite); more where transactions overlap (PostgreSQL), so that one commit waiting
   * (for its fsync, or for a lock another transaction holds) does not hold the next group's.
   */
  readonly insertsAtOnce: number;
  /** The live notification holding this key, if created at or after `since`. */
  findIdempotent(tenant: string, key: string, since: number): Promise<IdempotentHit | null>;
  /** One notification of the tenant with its stored events in order; null for unknown or other tenant's. */
  get(tenant: string, id: string): Promise<{ record: NotificationRecord; events: EventRecord[] } | null>;
  /** Which of these ids (a few hundred at most) are notifications of the tenant. */
  existing(tenant: string, ids: readonly string[]): Promise<Set<string>>;
  /**
   * Newest first (by acceptance order), at most `limit`, looking at LIST_SCAN of the tenant's
   * notifications at most when a filter other than the cursor is set (with `recipientDigest`,
   * of the tenant's notifications to that recipient, read through their index). `createdBefore` and
   * `createdAfter` first narrow the read to the acceptance order's range of those times (found
   * by seekTime, TIME_SKEW_MS wider), so an old range is reached at once.
   */
  list(tenant: string, filter: NotificationFilter, limit: number): Promise<NotificationListPage>;
  /** QUEUED or RETRYING and not claimed → CANCELLED with a CANCELLED event. */
  cancel(tenant: string, id: string, now: number): Promise<ActionOutcome>;
  /** FAILED → QUEUED, ready, attempts 0, with a QUEUED event (detail `redrive`). */
  redrive(tenant: string, id: string, now: number): Promise<ActionOutcome>;
}
