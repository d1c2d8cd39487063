import { CHANNELS, type Channel, PRIORITIES, priorityOf } from '../../notifications/model.ts';
import type { QueueSelector } from '../port/queue.ts';
import type { SqliteDb } from './open.ts';

/** One pause of one queue cell. */
export interface PauseEntry {
  priority: number;
  channel: Channel;
  pausedAt: number;
  resumedAt: number | null;
}

/** Active pauses and recent history, read once per claim (the table holds a few rows). */
export interface PauseView {
  isPaused(priority: number, channel: string): boolean;
  /**
   * The pause that held back a notification of this cell last touched at `updatedAt` and created
   * at `createdAt`: one that ended after both (so it was waiting while paused). A row scheduled
   * past the resume also counts (it sat in a paused queue, though it was not yet due).
   */
  heldBy(priority: number, channel: string, createdAt: number, updatedAt: number): PauseEntry | undefined;
}

const HISTORY = 200;

export function detailOf(pause: { priority: number; channel: string }): string {
  return `queue ${priorityOf(pause.priority)}/${pause.channel} paused by an admin`;
}

/** Pause bookkeeping on the queue_pauses table. */
export function createPauses(db: SqliteDb) {
  const recent = db.prepare(
    'SELECT priority, channel, paused_at AS pausedAt, resumed_at AS resumedAt FROM queue_pauses ORDER BY id DESC LIMIT ?',
  );
  const insert = db.prepare(
    'INSERT INTO queue_pauses (priority, channel, paused_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
  );
  const resume = db.prepare(
    'UPDATE queue_pauses SET resumed_at = ? WHERE priority = ? AND channel = ? AND resumed_at IS NULL',
  );
  const active = db
    .prepare('SELECT paused_at FROM queue_pauses WHERE priority = ? AND channel = ? AND resumed_at IS NULL')
    .pluck();
  const cellOf = db.prepare('SELECT priority, channel FROM notifications WHERE seq = ?');
  const hasThrottled = db.prepare(
    "SELECT 1 FROM notification_events WHERE notification_seq = ? AND type = 'THROTTLED' AND at >= ? LIMIT 1",
  );
  const event = db.prepare(
    "INSERT INTO notification_events (notification_seq, type, at, detail, source) VALUES (?, 'THROTTLED', ?, ?, 'admin')",
  );

  function view(): PauseView {
    const entries = recent.all(HISTORY) as PauseEntry[];
    const paused = new Set(
      entries.filter((e) => e.resumedAt === null).map((e) => `${e.priority}:${e.channel}`),
    );
    const ended = entries.filter((e) => e.resumedAt !== null);
    return {
      isPaused: (priority, channel) => paused.size > 0 && paused.has(`${priority}:${channel}`),
      heldBy(priority, channel, createdAt, updatedAt) {
        if (ended.length === 0) return undefined;
        return ended.find(
          (e) =>
            e.priority === priority &&
            e.channel === channel &&
            (e.resumedAt as number) >= updatedAt &&
            (e.resumedAt as number) >= createdAt,
        );
      },
    };
  }

  return {
    view,
    /** Writes the THROTTLED event of a held-back notification unless it already has one for that pause. */
    noteHeld(seq: number, pause: PauseEntry, createdAt: number): void {
      const at = Math.max(pause.pausedAt, createdAt);
      if (hasThrottled.get(seq, pause.pausedAt)) return;
      event.run(seq, at, detailOf(pause));
    },
    set(selector: QueueSelector, paused: boolean, now: number): void {
      const priorities = selector.priority === undefined ? PRIORITIES.map((_, i) => i) : [selector.priority];
      const channels = selector.channel === undefined ? CHANNELS : [selector.channel];
      for (const priority of priorities) {
        for (const channel of channels) {
          if (paused) insert.run(priority, channel, now);
          else resume.run(now, priority, channel);
        }
      }
    },
    throttleIfPaused(seqs: readonly number[], now: number): number {
      let written = 0;
      for (const seq of seqs) {
        const cell = cellOf.get(seq) as { priority: number; channel: string } | undefined;
        if (!cell) continue;
        const pausedAt = active.get(cell.priority, cell.channel) as number | undefined;
        if (pausedAt === undefined || hasThrottled.get(seq, pausedAt)) continue;
        event.run(seq, now, detailOf(cell));
        written++;
      }
      return written;
    },
  };
}
