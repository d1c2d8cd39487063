import { PRIORITIES } from '../notifications/model.ts';
import { type Awaitable, type PromotionTurn, type PromotionTurns, turnFrom } from './queue-core.ts';
import type { RunRow } from './rows-workflow-runs.ts';

/**
 * What the engine's take of due runs asks its store, inside the step's transaction (on
 * PostgreSQL each read locks what it returns, `FOR UPDATE SKIP LOCKED`).
 */
export interface DueRunsDriver {
  /** How many runs of each priority (index = rank) are due by `now`, counting up to `upTo` of each. */
  dueCounts(now: number, upTo: number): Awaitable<number[]>;
  /**
   * One walk of tenants in one priority (as the queue's promoteTurn): at most `looks` tenants
   * with runs in the due-time index, in tenant order after `after`, passing over those with none
   * due, visiting at most `visits` of those with some and taking up to `quota` of each one's due
   * runs in due order, `limit` in all. `last`: the last tenant it looked at, null past the last.
   */
  walk(rank: number, now: number, turn: PromotionTurn): Awaitable<{ rows: RunRow[]; last: string | null }>;
  /** Up to `limit` due runs of one priority in due order. */
  inDueOrder(rank: number, now: number, limit: number): Awaitable<RunRow[]>;
}

type Op = (driver: DueRunsDriver) => unknown;

function* call<T>(op: (driver: DueRunsDriver) => Awaitable<T>): Generator<Op, T, unknown> {
  return (yield op) as T;
}

/**
 * The due runs one engine step takes, at most `chunk`: CRITICAL ones first, then HIGH, NORMAL and
 * LOW. Within a priority with more runs due than the step has room for, tenants take turns first
 * (the queue's promotion rule, queue-core.ts `promote`): a walk from the tenant after the one the
 * last walk stopped at, an equal share of the room for each tenant with runs due, so one tenant's
 * million runs falling due do not hold back another tenant's run of that priority by more than
 * one step. What the walk leaves of the room goes in due order, so a tenant alone keeps the whole
 * step's pace; with no more runs due than the room, there is no walk. `turns` is the store's.
 */
export function* dueRuns(
  now: number,
  chunk: number,
  turns: PromotionTurns,
): Generator<Op, RunRow[], unknown> {
  const taken: RunRow[] = [];
  // Taking one priority's runs changes no other's due count: the four are read once.
  const dues = yield* call((d) => d.dueCounts(now, chunk + 1));
  for (const [rank] of PRIORITIES.entries()) {
    const left = chunk - taken.length;
    if (left <= 0) break;
    const due = dues[rank] ?? 0;
    if (due === 0) continue;
    const seen = new Set<string>();
    if (due > left) {
      const walked = yield* call((d) => d.walk(rank, now, turnFrom(turns[rank] ?? '', left)));
      turns[rank] = walked.last ?? '';
      for (const row of walked.rows) {
        seen.add(String(row.seq));
        taken.push(row);
      }
    }
    const room = left - seen.size;
    if (room <= 0) continue;
    // The walk's runs are still due (this step has not moved them): read past them.
    const more = yield* call((d) => d.inDueOrder(rank, now, room + seen.size));
    let added = 0;
    for (const row of more) {
      if (added === room) break;
      if (seen.has(String(row.seq))) continue;
      taken.push(row);
      added++;
    }
  }
  return taken;
}
