import { CHANNELS, type Channel, type NotificationRecord } from '../../notifications/model.ts';
import type { ClaimBudget } from '../port/queue.ts';
import { type NotificationRow, notificationFromRow } from '../rows.ts';
import type { SqliteDb } from './open.ts';
import type { createPauses, PauseView } from './queue-pauses.ts';

interface Head {
  seq: number;
  channel: string;
  created_at: number;
  updated_at: number;
}

/** What a claim did, for CycleResult. */
export interface ClaimOutcome {
  claimed: NotificationRecord[];
  expired: number;
  backlog: boolean[];
}

/**
 * Claims ready rows in (priority, seq) order across channels. Per priority and per unpaused
 * channel it reads the head of that channel's range of the ready index (priority, channel, seq),
 * an O(log n) seek whatever the backlog, then merges the heads by seq: FIFO holds across channels
 * without sorting the ready set. PostgreSQL does the same with FOR UPDATE SKIP LOCKED per head.
 */
export function createClaimer(db: SqliteDb, pauses: ReturnType<typeof createPauses>) {
  const heads = db.prepare(
    `SELECT seq, channel, created_at, updated_at FROM notifications
     WHERE queue_state = 'ready' AND priority = ? AND channel = ? ORDER BY seq LIMIT ?`,
  );
  const take = db.prepare(
    `UPDATE notifications SET status = 'PROCESSING', queue_state = 'leased', lease_owner = ?,
       lease_until = ?, attempts = attempts + 1, next_attempt_at = NULL, due_at = NULL, updated_at = ?
     WHERE seq = ? AND queue_state = 'ready' AND (expires_at IS NULL OR expires_at > ?) RETURNING *`,
  );
  const expire = db.prepare(
    `UPDATE notifications SET status = 'EXPIRED', queue_state = NULL, next_attempt_at = NULL,
       due_at = NULL, updated_at = ?
     WHERE seq = ? AND queue_state = 'ready' AND expires_at <= ?`,
  );
  const event = db.prepare(
    'INSERT INTO notification_events (notification_seq, type, at, attempt) VALUES (?, ?, ?, ?)',
  );

  function headsOf(
    priority: number,
    budget: ClaimBudget,
    view: PauseView,
    used: Map<string, number>,
    limit: number,
  ) {
    const lists: Head[][] = [];
    for (const channel of CHANNELS) {
      const cap = (budget.perChannel[channel] ?? 0) - (used.get(channel) ?? 0);
      if (cap <= 0 || view.isPaused(priority, channel)) continue;
      // One more than we may take tells whether rows are left behind (the backlog flag).
      lists.push(heads.all(priority, channel, Math.min(limit, cap) + 1) as Head[]);
    }
    return lists;
  }

  return function claim(owner: string, now: number, leaseUntil: number, budget: ClaimBudget): ClaimOutcome {
    const view = pauses.view();
    const claimed: NotificationRecord[] = [];
    const backlog = [false, false, false, false];
    const used = new Map<string, number>();
    let expired = 0;
    let shared = 0;
    // Strict order: once a priority leaves ready rows behind for lack of budget, lower ones wait.
    let stop = false;
    budget.perPriority.forEach((priorityLimit, priority) => {
      const open = priority === 0 ? priorityLimit : Math.min(priorityLimit, budget.sharedLimit - shared);
      const limit = stop ? 0 : open;
      const lists = headsOf(priority, budget, view, used, Math.max(limit, 0));
      const cursor = lists.map(() => 0);
      let taken = 0;
      while (taken < limit) {
        // The smallest seq among the channel heads that still have room.
        let best = -1;
        let bestHead: Head | undefined;
        for (let i = 0; i < lists.length; i++) {
          const head = lists[i]?.[cursor[i] ?? 0];
          if (!head) continue;
          const cap = (budget.perChannel[head.channel as Channel] ?? 0) - (used.get(head.channel) ?? 0);
          if (cap <= 0) continue;
          if (!bestHead || head.seq < bestHead.seq) {
            best = i;
            bestHead = head;
          }
        }
        if (!bestHead) break;
        const head = bestHead;
        cursor[best] = (cursor[best] ?? 0) + 1;
        const row = take.get(owner, leaseUntil, now, head.seq, now) as NotificationRow | undefined;
        if (!row) {
          if (expire.run(now, head.seq, now).changes > 0) {
            event.run(head.seq, 'EXPIRED', now, null);
            expired++;
          }
          continue;
        }
        const held = view.heldBy(priority, head.channel, head.created_at, head.updated_at);
        if (held) pauses.noteHeld(head.seq, held, head.created_at);
        event.run(row.seq, 'PROCESSING', now, row.attempts);
        used.set(head.channel, (used.get(head.channel) ?? 0) + 1);
        claimed.push(notificationFromRow(row));
        taken++;
      }
      if (priority > 0) shared += taken;
      backlog[priority] = lists.some((list, i) => (cursor[i] as number) < list.length);
      if (backlog[priority] && taken >= limit) stop = true;
    });
    return { claimed, expired, backlog };
  };
}
