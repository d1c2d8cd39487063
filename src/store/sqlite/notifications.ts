import { INBOX_COUNTS, priorityRank } from '../../notifications/model.ts';
import { type ActionEffect, CANCEL, REDRIVE } from '../../notifications/status.ts';
import { actionUpdate } from '../actions.ts';
import { filtersRows, listRange } from '../list-range.ts';
import {
  type ActionOutcome,
  columnsOf,
  type EncodedNotification,
  type IdempotentHit,
  type NotificationStore,
} from '../port/notifications.ts';
import { scannedPage } from '../port/scanned-page.ts';
import { type EventRow, eventFromRow, type NotificationRow, notificationFromRow } from '../rows.ts';
import type { FirstAfter } from '../seek-time.ts';
import { byText, createListWhere } from './filters.ts';
import { joinRank } from './lanes.ts';
import type { SqliteDb } from './open.ts';
import { RECORD_COLUMNS } from './record-columns.ts';
import { shaped } from './shaped.ts';

/** The columns a new notification sets, and one row's values for them (status QUEUED, no attempt yet). */
const INSERT_COLUMNS = `id, tenant, channel, priority, status, queue_state, due_at, recipient, template_key,
  template_version, content, variables, metadata, idempotency_key, request_hash, scheduled_at, expires_at,
  attempts, created_at, updated_at, lane_rank, recipient_digest, locale, category, trace_context`;
const ROW_VALUES = "(?, ?, ?, ?, 'QUEUED', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?)";
/** Rows a multi-row insert takes (SQLite binds at most 32,766 parameters; 16 x 20 is far below). */
const CHUNK = 16;

/** The SQLite notifications store: ingest, reads, cancel and redrive. */
export function createSqliteNotifications(db: SqliteDb): NotificationStore {
  // ON CONFLICT DO NOTHING (no target) skips a row whose idempotency key is taken; the same
  // statement works on PostgreSQL. `changes` tells the caller which rows went in.
  // A ready row joins the back of its tenant's line (src/store/lanes.ts); a scheduled one joins when due.
  const insert = db.prepare(
    `INSERT INTO notifications (${INSERT_COLUMNS}) VALUES ${ROW_VALUES} ON CONFLICT DO NOTHING`,
  );
  // Rows without an idempotency key go in CHUNK to a statement: one statement per row spent a
  // third of the insert time starting statements and binding (12.3 against 7.6 µs a row).
  const insertChunk = db.prepare(
    `INSERT INTO notifications (${INSERT_COLUMNS}) VALUES ${Array(CHUNK).fill(ROW_VALUES).join(', ')}`,
  );
  const joinAt = db.prepare(`SELECT ${joinRank('@tenant', '@priority', '@channel')}`).pluck();
  const byKey = shaped<NotificationRow>(
    db.prepare(`SELECT ${RECORD_COLUMNS} FROM notifications WHERE tenant = ? AND idempotency_key = ?`),
  );
  const releaseKey = db.prepare('UPDATE notifications SET idempotency_key = NULL WHERE seq = ?');
  const byId = shaped<NotificationRow>(
    db.prepare(`SELECT ${RECORD_COLUMNS} FROM notifications WHERE id = ? AND tenant = ?`),
  );
  const existingIds = db
    .prepare('SELECT id FROM notifications WHERE tenant = ? AND id IN (SELECT value FROM json_each(?))')
    .pluck();
  const eventsOf = shaped<EventRow>(
    db.prepare(
      `SELECT type, at, attempt, provider, detail, source, locale FROM notification_events
       WHERE notification_seq = ? AND type <> '${INBOX_COUNTS}' ORDER BY id`,
    ),
  );
  const addEvent = db.prepare(
    'INSERT INTO notification_events (notification_seq, type, at, attempt, provider, detail, source) VALUES (?, ?, ?, NULL, NULL, ?, ?)',
  );
  const exists = db.prepare('SELECT 1 FROM notifications WHERE id = ? AND tenant = ?');
  const listStatement = byText((sql) => shaped<NotificationRow>(db.prepare(sql)));
  const listWhere = createListWhere(db);
  const next = db.prepare(
    'SELECT seq, created_at FROM notifications WHERE tenant = ? AND seq > ? ORDER BY seq LIMIT 1',
  );
  const newest = db.prepare('SELECT seq FROM notifications WHERE tenant = ? ORDER BY seq DESC LIMIT 1');
  const firstAfter =
    (tenant: string): FirstAfter =>
    async (key) => {
      const row = next.get(tenant, Number(key)) as { seq: number; created_at: number } | undefined;
      return row && { key: BigInt(row.seq), at: row.created_at };
    };

  const hitOf = (row: NotificationRow): IdempotentHit => ({
    record: notificationFromRow(row),
    requestHash: row.request_hash,
  });

  /**
   * A row's values in ROW_VALUES order, with its turn in its tenant's line. `lines` holds the
   * next turn of each line this transaction has joined, so a batch looks a line up once and then
   * counts on; the caller moves the line on once the row is in.
   */
  const valuesOf = (n: EncodedNotification, lines: Map<string, number>) => {
    const waiting = n.scheduledAt !== null && n.scheduledAt > n.createdAt;
    const priority = priorityRank(n.priority);
    const line = `${n.tenant}\u0000${priority}\u0000${n.channel}`;
    let laneRank = 0;
    if (!waiting) {
      laneRank =
        lines.get(line) ?? (joinAt.get({ tenant: n.tenant, priority, channel: n.channel }) as number);
    }
    const encoded = columnsOf(n.encoded);
    const values = [
      n.id,
      n.tenant,
      n.channel,
      priority,
      waiting ? 'waiting' : 'ready',
      waiting ? n.scheduledAt : null,
      encoded.recipient,
      n.templateKey,
      n.templateVersion,
      encoded.content,
      encoded.variables,
      encoded.metadata,
      n.idempotencyKey,
      n.requestHash,
      n.scheduledAt,
      n.expiresAt,
      n.createdAt,
      n.createdAt,
      laneRank,
      encoded.recipientDigest,
      n.locale ?? null,
      n.category ?? null,
      n.traceContext ?? null,
    ];
    const joined = () => {
      if (!waiting) lines.set(line, laneRank + 1);
    };
    return { values, joined };
  };

  /** Inserts the row, unless its idempotency key is live: then the notification that holds it. */
  const insertOrHit = (
    values: unknown[],
    n: EncodedNotification,
    since: number,
  ): IdempotentHit | undefined => {
    if (insert.run(values).changes === 1) return undefined;
    // Ignored: the idempotency key is taken, or (never in practice) the id.
    const existing = n.idempotencyKey === null ? undefined : byKey.get(n.tenant, n.idempotencyKey);
    if (!existing) throw new Error(`notification id collision: ${n.id}`);
    if (existing.created_at >= since) return hitOf(existing);
    // The key's 24 h are over: release it from the old notification and take it.
    releaseKey.run(existing.seq);
    insert.run(values);
    return undefined;
  };

  /**
   * Rows in acceptance order (seq follows it): rows without an idempotency key are gathered and
   * written CHUNK to a statement; a row with a key is written alone, after what was gathered.
   */
  const insertAll = db.transaction((items: EncodedNotification[], since: number) => {
    const lines = new Map<string, number>();
    const results: Array<IdempotentHit | undefined> = new Array(items.length).fill(undefined);
    let gathered: Array<{ n: EncodedNotification; values: unknown[] }> = [];
    const writeGathered = () => {
      for (const row of gathered) insertOrHit(row.values, row.n, since);
      gathered = [];
    };
    items.forEach((n, i) => {
      const { values, joined } = valuesOf(n, lines);
      if (n.idempotencyKey === null) {
        gathered.push({ n, values });
        joined();
        if (gathered.length === CHUNK) {
          insertChunk.run(gathered.flatMap((row) => row.values));
          gathered = [];
        }
        return;
      }
      writeGathered();
      results[i] = insertOrHit(values, n, since);
      if (!results[i]) joined();
    });
    writeGathered();
    return results;
  });

  /** Applies an action status.ts decided (CANCEL, REDRIVE) and writes its event. */
  const act = (effect: ActionEffect) => {
    const update = db.prepare(actionUpdate(effect, joinRank, { now: '@now', id: '@id', tenant: '@tenant' }));
    const { type, detail, source } = effect.event;
    return db.transaction((tenant: string, id: string, now: number): ActionOutcome => {
      const row = update.get({ now, id, tenant }) as { seq: number } | undefined;
      if (!row) return exists.get(id, tenant) ? 'invalid_state' : 'not_found';
      addEvent.run(row.seq, type, now, detail, source);
      return 'done';
    });
  };
  const cancelTx = act(CANCEL);
  const redriveTx = act(REDRIVE);

  return {
    insertsAtOnce: 1,
    async insertMany(items, since) {
      return insertAll.immediate(items, since);
    },
    async findIdempotent(tenant, key, since) {
      const row = byKey.get(tenant, key);
      return row && row.created_at >= since ? hitOf(row) : null;
    },
    async get(tenant, id) {
      const row = byId.get(id, tenant);
      if (!row) return null;
      const events = eventsOf.all(row.seq).map(eventFromRow);
      return { record: notificationFromRow(row), events };
    },
    async existing(tenant, ids) {
      return new Set(existingIds.all(tenant, JSON.stringify(ids)) as string[]);
    },
    async list(tenant, filter, limit) {
      const { below, above } = await listRange(filter, firstAfter(tenant), async () => {
        const row = newest.get(tenant) as { seq: number } | undefined;
        return row?.seq;
      });
      // With a filter, the read looks at the next LIST_SCAN of the tenant's notifications at most
      // (of those to the recipient, through their index, when one is searched).
      const { floor, where, params } = listWhere(
        'notifications',
        'seq',
        [
          ['tenant = ?', tenant],
          ['recipient_digest = ?', filter.recipientDigest],
          ['broadcast_id = ?', filter.broadcastId],
          ['seq < ?', below],
          ['seq > ?', above],
        ],
        [
          ['status = ?', filter.status],
          ['priority = ?', filter.priority === undefined ? undefined : priorityRank(filter.priority)],
          ['channel = ?', filter.channel],
          ['created_at > ?', filter.createdAfter],
          ['created_at < ?', filter.createdBefore],
        ],
        filtersRows(filter),
      );
      const items = listStatement(
        `SELECT ${RECORD_COLUMNS} FROM notifications ${where} ORDER BY seq DESC LIMIT ?`,
      )
        .all([...params, limit])
        .map(notificationFromRow);
      return scannedPage(items, limit, floor);
    },
    async cancel(tenant, id, now) {
      return cancelTx.immediate(tenant, id, now);
    },
    async redrive(tenant, id, now) {
      return redriveTx.immediate(tenant, id, now);
    },
  };
}
