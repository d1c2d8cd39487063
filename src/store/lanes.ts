/**
 * Tenant lines (docs/dispatch.md, "Tenant lines"): within a (priority, channel) cell, claims take
 * ready rows by (lane_rank, seq), and these rules decide a row's lane_rank when it becomes ready.
 * Written once as SQL for both databases; each is an index seek or two (migration 070), whatever
 * the backlog. Arguments are SQL expressions for the row's columns (parameters, or the columns of
 * the row being updated). Under PostgreSQL's READ COMMITTED two transactions may give the same
 * tenant the same rank; seq breaks the tie, so order within the tenant holds without a lock.
 */
export interface LaneRules {
  /**
   * A row joining the queue (accepted, scheduled and now due, redriven): the turn after its
   * tenant's last ready row; the head's turn when its tenant has none waiting, so a tenant that
   * was idle gets no credit for it; 0 in an empty cell. A statement placing several rows of one
   * line adds each one's place among them.
   */
  joinRank(tenant: string, priority: string, channel: string): string;
  /**
   * A row coming back (a retry now due, a hold, an expired lease): it had its turn, so it goes to
   * the front, keeping its own rank when that is earlier still.
   */
  frontRank(rank: string, priority: string, channel: string): string;
  /** Whether a row due from `waiting` is a first attempt (joins) rather than a return (front). */
  joins(row: string): string;
  /**
   * The statement moving waiting rows back to ready: the rows `seqs` (an SQL list or subquery of
   * seqs, in any order) still waiting, each ranked by the rules above as the queue was before the
   * statement, and joining rows of one line in due order (due_at, seq) on from their line's
   * turn (looked up once per line). One statement on both databases, so that a batch ranks alike
   * on each: the ranks are computed from one snapshot (MATERIALIZED) before any row changes.
   * `lock` is PostgreSQL's row lock clause ('' on SQLite).
   */
  promote(seqs: string, lock: string): string;
}

/**
 * The condition of the ready index (priority, channel, lane_rank, seq), for the rows of `table`
 * (a name or an alias). `lane_rank >= 0` holds for every row (ranks start at 0 and only grow);
 * it is in the index's condition (migration 190) so that a statement without it cannot read
 * that index. A tenant's tail (joinRank) leaves it out, so the planner can read the tail only from
 * the line index, a seek. Otherwise PostgreSQL, with statistics taken while no row was ready,
 * read the tail from the ready index backwards, filtering by tenant: for a tenant with no ready
 * row, the whole of its cell's ready rows. Statements that read the ready index by priority and
 * channel (the claim's heads, a cell's head, the queue's counts) say it in full.
 */
export const readyIndexed = (table = 'notifications') =>
  `${table}.queue_state = 'ready' AND ${table}.lane_rank >= 0`;

/** The rules in one dialect: SQLite spells the two-argument minimum MIN, PostgreSQL LEAST. */
export function laneRules(least: 'MIN' | 'LEAST'): LaneRules {
  const head = (priority: string, channel: string) =>
    `(SELECT h.lane_rank FROM notifications h WHERE ${readyIndexed('h')} AND h.priority = ${priority}
       AND h.channel = ${channel} ORDER BY h.lane_rank LIMIT 1)`;
  const joinRank = (tenant: string, priority: string, channel: string) =>
    `COALESCE((SELECT t.lane_rank + 1 FROM notifications t WHERE t.queue_state = 'ready'
         AND t.tenant = ${tenant} AND t.priority = ${priority} AND t.channel = ${channel}
         ORDER BY t.lane_rank DESC LIMIT 1), ${head(priority, channel)}, 0)`;
  const frontRank = (rank: string, priority: string, channel: string) =>
    `${least}(${rank}, COALESCE(${head(priority, channel)}, 0))`;
  const joins = (row: string) => `(${row}.attempts = 0 AND ${row}.holds = 0)`;
  return {
    joinRank,
    frontRank,
    joins,
    promote: (seqs, lock) => `
      WITH due AS MATERIALIZED (
        SELECT seq, tenant, priority, channel, due_at, lane_rank, ${joins('notifications')} AS joins
        FROM notifications WHERE seq IN (${seqs}) AND queue_state = 'waiting' ${lock}),
      lines AS MATERIALIZED (
        SELECT l.tenant, l.priority, l.channel, ${joinRank('l.tenant', 'l.priority', 'l.channel')} AS base
        FROM (SELECT DISTINCT tenant, priority, channel FROM due WHERE due.joins) l),
      ranked AS MATERIALIZED (
        SELECT due.seq, CASE WHEN due.joins
            THEN lines.base + row_number() OVER (PARTITION BY due.tenant, due.priority, due.channel, due.joins
                                                 ORDER BY due.due_at, due.seq) - 1
            ELSE ${frontRank('due.lane_rank', 'due.priority', 'due.channel')} END AS lane_rank
        FROM due LEFT JOIN lines ON due.joins AND lines.tenant = due.tenant
          AND lines.priority = due.priority AND lines.channel = due.channel)
      UPDATE notifications SET queue_state = 'ready', due_at = NULL, lane_rank = ranked.lane_rank
      FROM ranked WHERE notifications.seq = ranked.seq`,
  };
}
