import { CHANNELS, type Channel, type NotificationRecord } from '../../notifications/model.ts';
import type { ClaimBudget } from '../port/queue.ts';
import { type NotificationRow, notificationFromRow } from '../rows.ts';
import type { Sql } from './connect.ts';
import { type EventInput, insertEvents } from './queue-complete.ts';
import { detailOf, hasThrottled, pauseView } from './queue-pauses.ts';

/** What a claim did, for CycleResult. */
export interface ClaimOutcome {
  claimed: NotificationRecord[];
  expired: number;
  backlog: boolean[];
}

/** A claimed row with its updated_at from before the claim (pause bookkeeping needs it). */
type ClaimedRow = NotificationRow & { touched_at: number };

interface PriorityClaim {
  claimed: ClaimedRow[] | null;
  expired: number;
  backlog: boolean;
}

/**
 * Claims one priority's rows in seq order across channels, in ONE statement. Each channel's head
 * is read from the ready partial index (priority, channel, seq) as an ordered index scan with
 * FOR UPDATE SKIP LOCKED, in a MATERIALIZED CTE so the planner cannot inline it and lock more
 * than the LIMIT. Other workers skip the rows locked here instead of queueing behind them; the
 * heads are merged by seq (FIFO across channels, as on SQLite) with each channel held to its
 * cap. One extra row per channel tells whether rows are left behind (the backlog flag); it stays
 * ready and is released at commit. Expired rows found at the head become EXPIRED instead.
 */
async function claimPriority(
  tx: Sql,
  owner: string,
  now: number,
  leaseUntil: number,
  priority: number,
  limit: number,
  caps: Record<Channel, number>,
): Promise<PriorityClaim> {
  const head = (channel: Channel) => {
    const take = caps[channel] > 0 ? Math.min(limit, caps[channel]) + 1 : 0;
    return tx`SELECT seq, channel, updated_at AS touched_at FROM notifications
      WHERE queue_state = 'ready' AND priority = ${priority} AND channel = ${channel}
      ORDER BY seq LIMIT ${take} FOR UPDATE SKIP LOCKED`;
  };
  const [row] = await tx<[PriorityClaim]>`
    WITH h_email AS MATERIALIZED (${head('email')}),
      h_sms AS MATERIALIZED (${head('sms')}),
      h_push AS MATERIALIZED (${head('push')}),
      heads AS (SELECT * FROM h_email UNION ALL SELECT * FROM h_sms UNION ALL SELECT * FROM h_push),
      ranked AS (SELECT *, row_number() OVER (PARTITION BY channel ORDER BY seq) AS rn FROM heads),
      picked AS MATERIALIZED (
        SELECT seq, touched_at FROM ranked
         WHERE rn <= CASE channel WHEN 'email' THEN ${caps.email}::int WHEN 'sms' THEN ${caps.sms}::int ELSE ${caps.push}::int END
         ORDER BY seq LIMIT ${limit}),
      expired AS (
        UPDATE notifications n SET status = 'EXPIRED', queue_state = NULL, next_attempt_at = NULL, due_at = NULL,
          updated_at = ${now}
        FROM picked WHERE n.seq = picked.seq AND n.expires_at <= ${now} RETURNING n.seq),
      claimed AS (
        UPDATE notifications n SET status = 'PROCESSING', queue_state = 'leased', lease_owner = ${owner},
          lease_until = ${leaseUntil}, attempts = n.attempts + 1, next_attempt_at = NULL, due_at = NULL,
          updated_at = ${now}
        FROM picked WHERE n.seq = picked.seq AND (n.expires_at IS NULL OR n.expires_at > ${now})
        RETURNING n.*, picked.touched_at),
      events AS (
        INSERT INTO notification_events (notification_seq, type, at, attempt)
        SELECT seq, 'EXPIRED', ${now}::bigint, NULL::int FROM expired)
    SELECT (SELECT json_agg(c ORDER BY c.seq) FROM claimed c) AS claimed,
           (SELECT count(*) FROM expired)::int AS expired,
           (SELECT count(*) FROM heads) > (SELECT count(*) FROM picked) AS backlog`;
  return row ?? { claimed: null, expired: 0, backlog: false };
}

/** Claims ready rows in (priority, seq) order within the budget, one statement per priority. */
export async function claim(
  tx: Sql,
  owner: string,
  now: number,
  leaseUntil: number,
  budget: ClaimBudget,
): Promise<ClaimOutcome> {
  const view = await pauseView(tx);
  const claimed: NotificationRecord[] = [];
  const backlog = [false, false, false, false];
  const used: Record<Channel, number> = { email: 0, sms: 0, push: 0 };
  let expired = 0;
  let shared = 0;
  const events: EventInput[] = [];
  // Strict order, as on SQLite: once a priority leaves ready rows behind for lack of budget,
  // lower ones wait (channel capacity alone does not hold them).
  let stop = false;
  for (const [priority, priorityLimit] of budget.perPriority.entries()) {
    const open = priority === 0 ? priorityLimit : Math.min(priorityLimit, budget.sharedLimit - shared);
    const limit = stop ? 0 : Math.max(0, open);
    const caps = { email: 0, sms: 0, push: 0 };
    for (const channel of CHANNELS) {
      if (!view.isPaused(priority, channel))
        caps[channel] = Math.max(0, (budget.perChannel[channel] ?? 0) - used[channel]);
    }
    if (limit === 0 && CHANNELS.every((c) => caps[c] === 0)) continue;
    const result = await claimPriority(tx, owner, now, leaseUntil, priority, limit, caps);
    expired += result.expired;
    backlog[priority] = result.backlog;
    for (const row of result.claimed ?? []) {
      // A pause's THROTTLED event goes before the PROCESSING it delayed.
      const held = view.heldBy(priority, row.channel, row.created_at, row.touched_at);
      if (held && !(await hasThrottled(tx, row.seq, held.pausedAt))) {
        const at = Math.max(held.pausedAt, row.created_at);
        events.push({ seq: row.seq, type: 'THROTTLED', at, detail: detailOf(held), source: 'admin' });
      }
      events.push({ seq: row.seq, type: 'PROCESSING', attempt: row.attempts });
      used[row.channel as Channel] += 1;
      claimed.push(notificationFromRow(row));
    }
    const taken = result.claimed?.length ?? 0;
    if (priority > 0) shared += taken;
    if (result.backlog && taken >= limit) stop = true;
  }
  if (events.length > 0) await insertEvents(tx, now, events);
  return { claimed, expired, backlog };
}
