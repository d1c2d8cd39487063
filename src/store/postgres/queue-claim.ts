import { type Channel, PRIORITIES } from '../../notifications/model.ts';
import type { PauseEntry } from '../../notifications/status.ts';
import { headsToRead, type PriorityClaim, type QueueDriver } from '../queue-core.ts';
import { type NotificationRow, notificationFromRow } from '../rows.ts';
import type { Query } from './connect.ts';
import { readyIndexed } from './lanes.ts';

/** Whether each priority has a ready row: each a literal, so that each probe reads its range of the ready index. */
const ANY_READY = `ARRAY[${PRIORITIES.map(
  (_, rank) => `EXISTS (SELECT 1 FROM notifications r WHERE ${readyIndexed('r')} AND r.priority = ${rank})`,
).join(', ')}]`;

/**
 * claimPriority for PostgreSQL, in ONE statement. Each channel's head is read from the ready
 * partial index (priority, channel, lane_rank, seq) as an ordered index scan with FOR UPDATE
 * SKIP LOCKED (round-robin across tenants, FIFO within each: src/store/lanes.ts), in a MATERIALIZED CTE so
 * the planner cannot inline it and lock more than the LIMIT. Other workers skip the rows locked
 * here instead of queueing behind them. The heads are merged across channels as SQLite's loop
 * merges them (always the smallest seq among the channels' next rows): ordering by the running
 * maximum of seq along each channel's order gives that merge in SQL. Each channel is held to its
 * cap. One extra row per
 * channel (headsToRead) tells whether rows are left behind (the backlog flag); it stays ready and
 * is released at commit. Picked rows past their expiresAt become EXPIRED instead, keeping their
 * place in the pick (the core asks again for their room). A channel paused now in this priority
 * is not read (a one-time check of the pauses' partial index, before the scan); asked for them
 * (`pauseHistory`), the statement also answers the recent pauses, so that a cycle's first claim
 * needs no statement before it, and whether each priority has any ready row (`anyReady`).
 */
export const claimPriorityOn =
  (tx: Query): QueueDriver['claimPriority'] =>
  async (owner, now, leaseUntil, priority, limit, caps, pauseHistory = 0): Promise<PriorityClaim> => {
    const head = (channel: Channel) => {
      const take = headsToRead(limit, caps[channel]);
      return tx`SELECT seq, channel, lane_rank, updated_at AS touched_at FROM notifications
      WHERE ${tx.unsafe(readyIndexed())} AND priority = ${priority} AND channel = ${channel}
        AND NOT EXISTS (SELECT 1 FROM queue_pauses q
          WHERE q.resumed_at IS NULL AND q.priority = ${priority} AND q.channel = ${channel})
      ORDER BY lane_rank, seq LIMIT ${take} FOR UPDATE SKIP LOCKED`;
    };
    const [row] = await tx<
      [
        {
          claimed: Array<NotificationRow & { touched_at: number }> | null;
          expired: number[] | null;
          backlog: boolean;
          pauses: PauseEntry[] | null;
          any_ready: boolean[] | null;
        },
      ]
    >`
    WITH h_email AS MATERIALIZED (${head('email')}),
      h_sms AS MATERIALIZED (${head('sms')}),
      h_push AS MATERIALIZED (${head('push')}),
      h_inapp AS MATERIALIZED (${head('inapp')}),
      heads AS (SELECT * FROM h_email UNION ALL SELECT * FROM h_sms UNION ALL SELECT * FROM h_push
        UNION ALL SELECT * FROM h_inapp),
      ranked AS (
        SELECT *, row_number() OVER w AS rn, max(seq) OVER w AS merge_key FROM heads
        WINDOW w AS (PARTITION BY channel ORDER BY lane_rank, seq ROWS UNBOUNDED PRECEDING)),
      picked AS MATERIALIZED (
        SELECT seq, touched_at, row_number() OVER (ORDER BY merge_key, rn) AS ord FROM ranked
         WHERE rn <= CASE channel WHEN 'email' THEN ${caps.email}::int WHEN 'sms' THEN ${caps.sms}::int
           WHEN 'push' THEN ${caps.push}::int ELSE ${caps.inapp}::int END
         ORDER BY merge_key, rn LIMIT ${limit}),
      expired AS (
        UPDATE notifications n SET status = 'EXPIRED', queue_state = NULL, next_attempt_at = NULL, due_at = NULL,
          updated_at = ${now}
        FROM picked WHERE n.seq = picked.seq AND n.expires_at <= ${now} RETURNING n.seq, picked.ord),
      claimed AS (
        UPDATE notifications n SET status = 'PROCESSING', queue_state = 'leased', lease_owner = ${owner},
          lease_until = ${leaseUntil}, attempts = n.attempts + 1, next_attempt_at = NULL, due_at = NULL,
          updated_at = GREATEST(${now}::bigint, n.created_at)
        FROM picked WHERE n.seq = picked.seq AND (n.expires_at IS NULL OR n.expires_at > ${now})
        RETURNING n.*, picked.touched_at, picked.ord)
    SELECT (SELECT json_agg(c ORDER BY c.ord) FROM claimed c) AS claimed,
           (SELECT json_agg(seq ORDER BY ord) FROM expired) AS expired,
           (SELECT count(*) FROM heads) > (SELECT count(*) FROM picked) AS backlog,
           (SELECT json_agg(json_build_object('priority', p.priority, 'channel', p.channel,
              'pausedAt', p.paused_at, 'resumedAt', p.resumed_at) ORDER BY p.id DESC)
            FROM (SELECT * FROM queue_pauses ORDER BY id DESC LIMIT ${pauseHistory}) p) AS pauses,
           ${tx.unsafe(pauseHistory > 0 ? ANY_READY : 'NULL::boolean[]')} AS any_ready`;
    return {
      claimed: (row?.claimed ?? []).map((r) => ({ record: notificationFromRow(r), touchedAt: r.touched_at })),
      expired: row?.expired ?? [],
      backlog: row?.backlog ?? false,
      ...(pauseHistory > 0 ? { pauses: row?.pauses ?? [], anyReady: row?.any_ready ?? undefined } : {}),
    };
  };
