import type { EncodedNotification, IdempotentHit } from '../store/port/notifications.ts';

/** One hand-over of accepted rows from the main thread, to be committed before its 201s. */
export interface InsertCall {
  rows: EncodedNotification[];
  since: number;
}

type Results = Array<IdempotentHit | undefined>;
type InsertMany = (rows: EncodedNotification[], since: number) => Promise<Results>;

/**
 * Commits hand-overs that waited together in one transaction, one fsync for all of them, and
 * answers each with its own rows' results. While the thread that claims is inside a commit's
 * fsync (about 4.5 ms on the dev VM) the next hand-overs queue behind it; joining them keeps the
 * number of fsyncs, and with it the time a CRITICAL spends queued behind other commits, from
 * growing with the rate of hand-overs.
 *
 * Joining changes no outcome. The rows keep their order, so a repeated Idempotency-Key in a later
 * hand-over finds the earlier one's row, as it would in a transaction of its own. The idempotency
 * window starts at the earliest `since` of them (the hand-overs are milliseconds apart). And if
 * the joint transaction fails, each hand-over is committed alone, in order, so one bad row fails
 * only its own hand-over (whose group commit then retries its requests one by one).
 */
export function insertJoined(calls: InsertCall[], insertMany: InsertMany): Array<Promise<Results>> {
  const [only] = calls;
  if (calls.length === 1 && only) return [insertMany(only.rows, only.since)];
  const since = Math.min(...calls.map((call) => call.since));
  const together = insertMany(
    calls.flatMap((call) => call.rows),
    since,
  ).then(
    (results) => {
      let at = 0;
      return calls.map((call) => {
        const own = results.slice(at, at + call.rows.length);
        at += call.rows.length;
        return own;
      });
    },
    () => undefined,
  );
  return calls.map((call, i) => together.then((split) => split?.[i] ?? insertMany(call.rows, call.since)));
}
