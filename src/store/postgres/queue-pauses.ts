import { CHANNELS, PRIORITIES, priorityOf } from '../../notifications/model.ts';
import type { QueueSelector } from '../port/queue.ts';
import type { Sql } from './connect.ts';

/** One pause of one queue cell (the same bookkeeping as sqlite/queue-pauses.ts). */
export interface PauseEntry {
  priority: number;
  channel: string;
  pausedAt: number;
  resumedAt: number | null;
}

/** Active pauses and recent history, read once per claim (the table holds a few rows). */
export interface PauseView {
  isPaused(priority: number, channel: string): boolean;
  /** The ended pause that held back a notification of this cell created and last touched before it ended. */
  heldBy(priority: number, channel: string, createdAt: number, updatedAt: number): PauseEntry | undefined;
}

const HISTORY = 200;

export const detailOf = (pause: { priority: number; channel: string }) =>
  `queue ${priorityOf(pause.priority)}/${pause.channel} paused by an admin`;

export async function pauseView(tx: Sql): Promise<PauseView> {
  const entries = await tx<PauseEntry[]>`SELECT priority, channel, paused_at AS "pausedAt",
    resumed_at AS "resumedAt" FROM queue_pauses ORDER BY id DESC LIMIT ${HISTORY}`;
  const paused = new Set(
    entries.filter((e) => e.resumedAt === null).map((e) => `${e.priority}:${e.channel}`),
  );
  const ended = entries.filter((e) => e.resumedAt !== null);
  return {
    isPaused: (priority, channel) => paused.has(`${priority}:${channel}`),
    heldBy: (priority, channel, createdAt, updatedAt) =>
      ended.find(
        (e) =>
          e.priority === priority &&
          e.channel === channel &&
          (e.resumedAt as number) > updatedAt &&
          (e.resumedAt as number) > createdAt,
      ),
  };
}

/** Whether this notification already has its THROTTLED event for a pause that began at `pausedAt`. */
export async function hasThrottled(tx: Sql, seq: number, pausedAt: number): Promise<boolean> {
  const rows = await tx`SELECT 1 FROM notification_events
    WHERE notification_seq = ${seq} AND type = 'THROTTLED' AND at >= ${pausedAt} LIMIT 1`;
  return rows.length > 0;
}

export async function setPaused(
  tx: Sql,
  selector: QueueSelector,
  paused: boolean,
  now: number,
): Promise<void> {
  const priorities = selector.priority === undefined ? PRIORITIES.map((_, i) => i) : [selector.priority];
  const channels = selector.channel === undefined ? [...CHANNELS] : [selector.channel];
  for (const priority of priorities) {
    for (const channel of channels) {
      if (paused) {
        await tx`INSERT INTO queue_pauses (priority, channel, paused_at) VALUES (${priority}, ${channel}, ${now})
                 ON CONFLICT DO NOTHING`;
      } else {
        await tx`UPDATE queue_pauses SET resumed_at = ${now}
                 WHERE priority = ${priority} AND channel = ${channel} AND resumed_at IS NULL`;
      }
    }
  }
}

export async function throttleIfPaused(tx: Sql, seqs: readonly number[], now: number): Promise<number> {
  const rows = await tx<{ seq: number; priority: number; channel: string }[]>`
    SELECT n.seq, n.priority, n.channel FROM notifications n
      JOIN queue_pauses p ON p.priority = n.priority AND p.channel = n.channel AND p.resumed_at IS NULL
     WHERE n.seq = ANY(${tx.array([...seqs]) as never}::bigint[])
       AND NOT EXISTS (SELECT 1 FROM notification_events e WHERE e.notification_seq = n.seq
                         AND e.type = 'THROTTLED' AND e.at >= p.paused_at)`;
  for (const row of rows) {
    await tx`INSERT INTO notification_events (notification_seq, type, at, detail, source)
             VALUES (${row.seq}, 'THROTTLED', ${now}, ${detailOf(row)}, 'admin')`;
  }
  return rows.length;
}
