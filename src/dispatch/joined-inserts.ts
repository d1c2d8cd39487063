import { type Joined, joined } from '../thread-calls.ts';

/** One hand-over from the main thread (accepted rows, or workflow triggers), to be committed before its answers. */
export interface InsertCall<T> {
  rows: T[];
  since: number;
}

/** Commits rows in one transaction: one result a row (a live Idempotency-Key's hit or nothing). */
type InsertMany<T, R> = (rows: T[], since: number) => Promise<R[]>;

/**
 * Commits hand-overs that waited together in one transaction, one fsync for all of them, and
 * answers each with its own rows' results (ingest's rows, or workflow triggers: a trigger is a
 * "row" here, its runs go with it). While the thread that claims is inside a commit's
 * fsync (about 4.5 ms on the dev VM) the next hand-overs queue behind it; joining them keeps the
 * number of fsyncs, and with it the time a CRITICAL spends queued behind other commits, from
 * growing with the rate of hand-overs.
 *
 * Joining changes no outcome. The rows keep their order, so a repeated Idempotency-Key in a later
 * hand-over finds the earlier one's row, as it would in a transaction of its own (an urgent
 * commit, served ahead, is not among them: see threadCommits). The idempotency
 * window starts at the earliest `since` of them (the hand-overs are milliseconds apart). And if
 * the joint transaction fails, each hand-over is committed alone, in order, so one bad row fails
 * only its own hand-over (whose group commit then retries its requests one by one).
 */
export function insertJoined<T, R>(
  calls: InsertCall<T>[],
  insertMany: InsertMany<T, R>,
): Array<Promise<R[]>> {
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

/**
 * The dispatch thread's commit methods (thread-entry.ts), on its role once `role` resolves:
 * hand-overs served joined (insertJoined), and urgent rows (ingest's CRITICAL and HIGH flush)
 * served alone, ahead of the hand-overs queued right before them (LineOptions.ahead). A joined
 * commit served after an urgent one begins once that one has committed and been answered: served
 * first but both on the same microtask queue, the urgent commit's wake-up and answer came after
 * the bulk's transaction. Hand-overs keep their order among themselves.
 */
export function threadCommits<Role>(role: Promise<Role>) {
  let urgentDone: Promise<unknown> = Promise.resolve();
  return {
    joined<T, R>(commitOf: (role: Role) => InsertMany<T, R>): Joined<[T[], number], R[]> {
      return joined((calls: Array<[T[], number]>) => {
        const outcomes = Promise.all([role, urgentDone]).then(([built]) =>
          insertJoined(
            calls.map(([rows, since]) => ({ rows, since })),
            commitOf(built),
          ),
        );
        return calls.map((_, i) => outcomes.then((all) => all[i] as Promise<R[]>));
      });
    },
    alone<T, R>(commitOf: (role: Role) => InsertMany<T, R>): (rows: T[], since: number) => Promise<R[]> {
      return (rows, since) => {
        const work = role.then((built) => commitOf(built)(rows, since));
        // Registered before the line's answer: the joined commits wait for both.
        urgentDone = Promise.allSettled([urgentDone, work]);
        return work;
      };
    },
  };
}
