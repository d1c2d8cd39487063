import { setImmediate as yieldTurn } from 'node:timers/promises';
import { priorityRank } from '../../notifications/model.ts';
import { CANCEL } from '../../notifications/status.ts';
import { actionUpdateWhere } from '../actions.ts';
import { fanOutIdRest, fanOutIdStart } from '../fan-out-ids.ts';
import type { BroadcastStore, FanOutStep } from '../port/broadcasts.ts';
import {
  BROADCAST_COLUMNS,
  type BroadcastRow,
  broadcastFromRow,
  fannedValues,
  stepOf,
} from '../rows-topics.ts';
import { joinRank } from './lanes.ts';
import { preparedOnce, relaxedSync, type SqliteDb } from './open.ts';

/** A made notification's ID (store/fan-out-ids.ts), from its row's place `k`. */
const ID = `@idStart || ${fanOutIdRest.sqlite('k')}`;

/** Index entries one slice of a broadcast's counts reads (a few milliseconds). */
const COUNT_SLICE = 20_000;

interface CountRow {
  status: string;
  n: number;
  last: number;
}

function prepare(db: SqliteDb) {
  return {
    topic: db.prepare<[string, string], { subscribers: number }>(
      'SELECT subscribers FROM topics WHERE tenant = ? AND topic_key = ?',
    ),
    insert: db.prepare(
      `INSERT INTO broadcasts (id, tenant, topic_key, status, channel, priority, template_key, template_version,
         content, variables, metadata, category, locale, scheduled_at, expires_at, pending, advanced_at, created_at, updated_at,
         trace_context)
       VALUES (@id, @tenant, @topic, 'QUEUED', @channel, @priority, @templateKey, @templateVersion, @content, @variables,
         @metadata, @category, @locale, @scheduledAt, @expiresAt, 1, @createdAt, @createdAt, @createdAt, @traceContext)`,
    ),
    one: db.prepare<[string, string], BroadcastRow>(
      `SELECT ${BROADCAST_COLUMNS} FROM broadcasts WHERE tenant = ? AND id = ?`,
    ),
    // One slice of the counts: the next COUNT_SLICE of the broadcast's notifications in seq order
    // (index only: notifications_broadcast holds the status), by status, with the slice's last seq.
    counts: db.prepare<{ tenant: string; id: string; from: number; slice: number }, CountRow>(
      `SELECT status, count(*) AS n, max(seq) AS last FROM (SELECT seq, status FROM notifications
         WHERE tenant = @tenant AND broadcast_id = @id AND seq > @from ORDER BY seq LIMIT @slice)
       GROUP BY status`,
    ),
    cancel: db.prepare<[number, string, string]>(
      `UPDATE broadcasts SET status = 'CANCELLED', pending = 1, updated_at = ?
       WHERE tenant = ? AND id = ? AND status <> 'CANCELLED'`,
    ),
    hasWork: db.prepare('SELECT 1 FROM broadcasts WHERE pending = 1 LIMIT 1').pluck(),
    next: db.prepare<[], BroadcastRow>(
      `SELECT ${BROADCAST_COLUMNS} FROM broadcasts WHERE pending = 1 ORDER BY advanced_at LIMIT 1`,
    ),
    // The snapshot: AUTOINCREMENT never reuses a seq, so later memberships are all above it.
    // max() alone, so SQLite reads the last rowid rather than the table (no coalesce around it).
    snapshot: db.prepare('SELECT max(seq) FROM topic_subscribers').pluck(),
    // The chunk: how many of the snapshot's members follow the cursor, and the last of them.
    bounds: db.prepare(
      `SELECT count(*) AS n, max(recipient_id) AS last FROM (SELECT recipient_id FROM topic_subscribers
         WHERE tenant = @tenant AND topic_key = @topic AND recipient_id > @from AND seq <= @until
         ORDER BY recipient_id LIMIT @chunk)`,
    ),
    joinAt: db.prepare(`SELECT ${joinRank('@tenant', '@priority', '@channel')}`).pluck(),
    // One statement for the chunk; the window function numbers its rows (their lane ranks and IDs).
    fan: db.prepare(
      `INSERT INTO notifications (id, tenant, channel, priority, status, queue_state, due_at, recipient, template_key,
         template_version, content, variables, metadata, category, locale, scheduled_at, expires_at, attempts,
         created_at, updated_at, lane_rank, broadcast_id, trace_context)
       SELECT ${ID}, @tenant, @channel, @priority, 'QUEUED', @queueState, @dueAt, json_object('id', recipient_id),
         @templateKey, @templateVersion, NULL, NULL, NULL, @category, @locale, @scheduledAt, @expiresAt,
         0, @now, @now,
         @base + k * @step, @broadcastId,
         -- Content, variables, metadata and the trace context (each notification is processed in the
         -- trace of the request that made the broadcast, docs/tracing.md) are read from the broadcast
         -- (record-columns.ts).
         NULL
       FROM (SELECT recipient_id, row_number() OVER (ORDER BY recipient_id) - 1 AS k
         FROM topic_subscribers
         WHERE tenant = @tenant AND topic_key = @topic AND recipient_id > @from AND recipient_id <= @to
           AND seq <= @until)`,
    ),
    advance: db.prepare(
      `UPDATE broadcasts SET status = @status, pending = @pending, recipients = @recipients, until_seq = @until,
         fanned_to = @to, created = created + @made, advanced_at = @now, updated_at = @now WHERE seq = @seq`,
    ),
    cancelBounds: db.prepare(
      `SELECT count(*) AS n, max(seq) AS last FROM (SELECT seq FROM notifications
         WHERE tenant = @tenant AND broadcast_id = @id AND seq > @from ORDER BY seq LIMIT @chunk)`,
    ),
    cancelChunk: db
      .prepare(
        actionUpdateWhere(
          CANCEL,
          joinRank,
          '@now',
          'tenant = @tenant AND broadcast_id = @id AND seq > @from AND seq <= @to',
        ),
      )
      .pluck(),
    cancelEvents: db.prepare(
      `INSERT INTO notification_events (notification_seq, type, at, attempt, provider, detail, source)
       SELECT value, @type, @now, NULL, NULL, @detail, @source FROM json_each(@seqs)`,
    ),
    cancelAdvance: db.prepare(
      'UPDATE broadcasts SET pending = @pending, cancelled_to = @to, advanced_at = @now WHERE seq = @seq',
    ),
  };
}

const statements = preparedOnce(prepare);

/** The SQLite implementation of the broadcast port (see port/broadcasts.ts). */
export function createSqliteBroadcasts(db: SqliteDb): BroadcastStore {
  const s = statements(db);

  const create = db.transaction((b: Parameters<BroadcastStore['create']>[0]) => {
    const topic = s.topic.get(b.tenant, b.topic);
    if (!topic) return 'topic' as const;
    if (topic.subscribers === 0) return 'empty' as const;
    s.insert.run({ ...b, priority: priorityRank(b.priority), traceContext: b.traceContext ?? null });
    return 'created' as const;
  });

  const fanOut = (b: BroadcastRow, now: number, chunk: number): FanOutStep => {
    const starting = b.status === 'QUEUED';
    const until = starting ? ((s.snapshot.get() as number | null) ?? 0) : Number(b.until_seq);
    // A topic erased meanwhile fans out to no one more, while its memberships are being deleted.
    const topic = s.topic.get(b.tenant, b.topic_key);
    const recipients = starting ? (topic?.subscribers ?? 0) : Number(b.recipients);
    const from = b.fanned_to;
    const { n, last } = topic
      ? (s.bounds.get({ tenant: b.tenant, topic: b.topic_key, from, until, chunk }) as {
          n: number;
          last: string | null;
        })
      : { n: 0, last: null };
    const { waiting, ...v } = fannedValues(b);
    if (n > 0) {
      const line = { tenant: v.tenant, priority: v.priority, channel: v.channel };
      const base = waiting ? 0 : (s.joinAt.get(line) as number);
      s.fan.run({
        ...v,
        idStart: fanOutIdStart(now),
        topic: b.topic_key,
        from,
        to: last,
        until,
        now,
        base,
        step: waiting ? 0 : 1,
      });
    }
    const finished = n < chunk;
    s.advance.run({
      status: finished ? 'DONE' : 'FANNING_OUT',
      pending: finished ? 0 : 1,
      recipients,
      until,
      to: last ?? from,
      made: n,
      now,
      seq: b.seq,
    });
    return stepOf(b, n, 0, finished);
  };

  const cancelSome = (b: BroadcastRow, now: number, chunk: number): FanOutStep => {
    const from = Number(b.cancelled_to);
    const { n, last } = s.cancelBounds.get({ tenant: b.tenant, id: b.id, from, chunk }) as {
      n: number;
      last: number | null;
    };
    let cancelled = 0;
    if (n > 0) {
      const seqs = s.cancelChunk.all({ tenant: b.tenant, id: b.id, from, to: last, now }) as number[];
      cancelled = seqs.length;
      const { type, detail, source } = CANCEL.event;
      if (cancelled > 0) s.cancelEvents.run({ type, detail, source, now, seqs: JSON.stringify(seqs) });
    }
    const finished = n < chunk;
    s.cancelAdvance.run({ pending: finished ? 0 : 1, to: last ?? from, now, seq: b.seq });
    return stepOf(b, 0, cancelled, finished);
  };

  // A step commits without an fsync of its own (issue 50, decision record 0037): it was the
  // largest share of the dispatch thread's time in a fan-out (a FULL commit waits ~4.5 ms for the
  // disk, a 500-row step's statements take ~3 ms), 2,000 waits a million. A kill -9 loses nothing
  // (WAL); a power cut can lose the latest steps whole, notifications and cursor together, and
  // they are made again: each subscriber still has one notification, and one sent in that window
  // is sent again, as for the queue's own claims and completions (relaxedSync).
  const relaxed = relaxedSync(db);
  const step = db.transaction((now: number, chunk: number): FanOutStep | null => {
    const b = s.next.get();
    if (!b) return null;
    return b.status === 'CANCELLED' ? cancelSome(b, now, chunk) : fanOut(b, now, chunk);
  });

  return {
    async create(b) {
      return create.immediate(b);
    },
    async get(tenant, id) {
      const row = s.one.get(tenant, id);
      return row ? broadcastFromRow(row) : null;
    },
    async counts(tenant, id) {
      // Read in slices with the event loop yielded between them: this runs on the API's loop, and
      // a topic of a million is a million index entries (about 60 ms at 300,000 under load, in
      // one read), which every request on the loop, a CRITICAL's too, would wait for.
      const counts: Record<string, number> = {};
      for (let from = 0; ; ) {
        const rows = s.counts.all({ tenant, id, from, slice: COUNT_SLICE });
        let read = 0;
        for (const r of rows) {
          counts[r.status] = (counts[r.status] ?? 0) + r.n;
          read += r.n;
          from = Math.max(from, r.last);
        }
        if (read < COUNT_SLICE) return counts;
        await yieldTurn();
      }
    },
    async cancel(tenant, id, now) {
      s.cancel.run(now, tenant, id);
      const row = s.one.get(tenant, id);
      return row ? broadcastFromRow(row) : null;
    },
    async hasWork() {
      return s.hasWork.get() !== undefined;
    },
    async step(now, chunk) {
      return relaxed(() => step.immediate(now, chunk));
    },
  };
}
