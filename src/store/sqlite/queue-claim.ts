import { CHANNELS, type Channel } from '../../notifications/model.ts';
import type { PauseEntry } from '../../notifications/status.ts';
import { type ClaimedRow, headsToRead, openCaps, type QueueDriver } from '../queue-core.ts';
import { type NotificationRow, notificationFromRow } from '../rows.ts';
import { readyIndexed } from './lanes.ts';
import type { SqliteDb } from './open.ts';
import { RECORD_COLUMNS } from './record-columns.ts';
import { shaped } from './shaped.ts';

interface Head {
  seq: number;
  channel: Channel;
  updated_at: number;
}

/**
 * claimPriority for SQLite. Per channel with room it reads the head of that channel's range of
 * the ready index (priority, channel, lane_rank, seq), an O(log n) seek whatever the backlog:
 * round-robin across tenants, FIFO within each (src/store/lanes.ts). It then merges the channels' heads by
 * seq, so acceptance order holds across channels without sorting the ready set. One more row
 * than it may take per channel (headsToRead) tells whether rows are left behind (the backlog flag).
 * A picked row past its expiresAt becomes EXPIRED and keeps its place in the pick, as the
 * contract of claimPriority says (the core asks again for its room). Asked for the recent pauses
 * (`pauseHistory`), it reads them first (`pauses`, the driver's) and leaves the paused channels out.
 */
export function createClaimPriority(db: SqliteDb, pauses: (limit: number) => PauseEntry[]) {
  const heads = db.prepare(
    `SELECT seq, channel, updated_at FROM notifications
     WHERE ${readyIndexed()} AND priority = ? AND channel = ? ORDER BY lane_rank, seq LIMIT ?`,
  );
  const take = shaped<NotificationRow>(
    db.prepare(
      `UPDATE notifications SET status = 'PROCESSING', queue_state = 'leased', lease_owner = ?,
         lease_until = ?, attempts = attempts + 1, next_attempt_at = NULL, due_at = NULL,
         updated_at = max(?, created_at)
       WHERE seq = ? AND queue_state = 'ready' AND (expires_at IS NULL OR expires_at > ?)
       RETURNING ${RECORD_COLUMNS}`,
    ),
  );
  const expire = db.prepare(
    `UPDATE notifications SET status = 'EXPIRED', queue_state = NULL, next_attempt_at = NULL,
       due_at = NULL, updated_at = ?
     WHERE seq = ? AND queue_state = 'ready' AND expires_at <= ?`,
  );

  const claimPriority: QueueDriver['claimPriority'] = (
    owner,
    now,
    leaseUntil,
    priority,
    limit,
    asked,
    pauseHistory = 0,
  ) => {
    const recent = pauseHistory > 0 ? pauses(pauseHistory) : undefined;
    const caps = recent === undefined ? asked : openCaps(asked, priority, recent);
    const lists: Head[][] = [];
    for (const channel of CHANNELS) {
      const read = headsToRead(limit, caps[channel]);
      if (read > 0) lists.push(heads.all(priority, channel, read) as Head[]);
    }
    const cursor = lists.map(() => 0);
    const used: Record<Channel, number> = { email: 0, sms: 0, push: 0, inapp: 0 };
    const claimed: ClaimedRow[] = [];
    const expired: number[] = [];
    for (let picked = 0; picked < limit; picked++) {
      // The smallest seq among the channel heads that still have room.
      let best = -1;
      let bestHead: Head | undefined;
      for (let i = 0; i < lists.length; i++) {
        const head = lists[i]?.[cursor[i] ?? 0];
        if (!head || used[head.channel] >= caps[head.channel]) continue;
        if (!bestHead || head.seq < bestHead.seq) {
          best = i;
          bestHead = head;
        }
      }
      if (!bestHead) break;
      cursor[best] = (cursor[best] ?? 0) + 1;
      used[bestHead.channel] += 1;
      const row = take.get(owner, leaseUntil, now, bestHead.seq, now);
      if (row) claimed.push({ record: notificationFromRow(row), touchedAt: bestHead.updated_at });
      else if (expire.run(now, bestHead.seq, now).changes > 0) expired.push(bestHead.seq);
    }
    const backlog = lists.some((list, i) => (cursor[i] as number) < list.length);
    return { claimed, expired, backlog, ...(recent === undefined ? {} : { pauses: recent }) };
  };
  return claimPriority;
}
