import type { LoggedStatus } from './port/status-log.ts';

/**
 * A run stored already past RUNNING (a trigger that took its first steps, workflows/advance.ts
 * `firstSteps`) has one row in the status log, the status it was stored in, standing for its two
 * changes: RUNNING, then that status (decision 0060). A run's first row is otherwise its RUNNING,
 * so the rule needs no mark: a run's row with no earlier one (`previous` null) that is not RUNNING
 * implies the RUNNING before it. Both adapters' reads expand it here: the implied RUNNING comes
 * just before the row, with a cursor of its own (the row's, marked), so a reader that stops
 * between the two (a page's end, a stream client's Last-Event-ID) reads on from the second, and
 * a callback's message for each has an id of its own.
 */
const START = '~';

/** The cursor of the RUNNING implied by the row at `cursor`. */
export const startCursor = (cursor: string): string => `${cursor}${START}`;

/** A cursor's row, and whether it is the implied RUNNING just before that row. */
export function cursorRow(cursor: string): { row: string; start: boolean } {
  return cursor.endsWith(START)
    ? { row: cursor.slice(0, -START.length), start: true }
    : { row: cursor, start: false };
}

/** Log order of two cursors, from the adapter's order of its rows' cursors. */
export function compareCursors(a: string, b: string, rows: (a: string, b: string) => number): number {
  const x = cursorRow(a);
  const y = cursorRow(b);
  return rows(x.row, y.row) || Number(y.start) - Number(x.start);
}

/** Whether a log row stands for its run's RUNNING and then the status it names. */
export const impliesRun = (row: LoggedStatus): boolean =>
  row.run !== null && row.previous === null && row.type !== 'RUNNING';

/**
 * A read's rows with each implied RUNNING made a change of its own before its row, those not
 * after `from` (the RUNNING of `from`'s row when reading on from it) or after `until` left out,
 * at most `limit`.
 */
export function expandStarts(
  rows: LoggedStatus[],
  window: { from: string; until?: string | undefined; limit: number },
  compare: (a: string, b: string) => number,
): LoggedStatus[] {
  const changes: LoggedStatus[] = [];
  for (const row of rows) {
    if (impliesRun(row)) {
      changes.push({ ...row, cursor: startCursor(row.cursor), type: 'RUNNING', previous: null });
      changes.push({ ...row, previous: 'RUNNING' });
    } else changes.push(row);
  }
  const { from, until, limit } = window;
  return changes
    .filter((c) => compare(c.cursor, from) > 0 && (until === undefined || compare(c.cursor, until) <= 0))
    .slice(0, limit);
}
