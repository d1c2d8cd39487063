import type { SqliteDb } from './open.ts';

/** SQLite's own threshold, in WAL frames, for the automatic checkpoint after a commit. */
export const AUTOCHECKPOINT_FRAMES = 1000;
/**
 * The automatic checkpoint's threshold while a broadcast fans out (about 40 MB of WAL): a
 * backstop only, so the WAL stays bounded however long urgent work keeps arriving.
 */
export const FAN_OUT_BACKSTOP_FRAMES = 10_000;
/** Notifications a fan-out makes between two of its checkpoints (about 1,000 frames of steps). */
export const CHECKPOINT_ROWS = 5000;

/** Where a fan-out's WAL checkpoints fall, on the writer's connection. */
export interface StepCheckpoints {
  /** After a step's commit: `made` rows, `busy` when the fan-out has more to do. */
  afterStep(made: number, busy: boolean, urgent: boolean): void;
}

/**
 * A checkpoint copies the WAL into the database file and syncs both, on the thread that commits
 * (SQLite's automatic one runs inside whichever commit crosses AUTOCHECKPOINT_FRAMES): 7 to 23 ms
 * under load, which a CRITICAL committed or claimed meanwhile waits for. While a broadcast fans
 * out, the automatic one is held back to FAN_OUT_BACKSTOP_FRAMES and the fan-out runs one at the
 * end of a step every CHECKPOINT_ROWS, unless urgent work arrived lately: then the checkpoint waits
 * for the first step after that (decision record 0054). A checkpoint on the writer's own
 * connection, between its transactions, lets the next transaction restart the WAL from its start.
 */
export function stepCheckpoints(db: SqliteDb): StepCheckpoints {
  const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  const threshold = (frames: number) => db.pragma(`wal_autocheckpoint = ${frames}`);
  let held = false;
  let since = 0;
  return {
    afterStep(made, busy, urgent) {
      since += made;
      if (busy && !held) {
        threshold(FAN_OUT_BACKSTOP_FRAMES);
        held = true;
      }
      if (!held) return;
      if (!urgent && (since >= CHECKPOINT_ROWS || !busy)) {
        checkpoint.get();
        since = 0;
      }
      if (busy) return;
      threshold(AUTOCHECKPOINT_FRAMES);
      held = false;
    },
  };
}
