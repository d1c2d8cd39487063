import type { PendingQuery, Row } from 'postgres';
import { PRIORITIES } from '../../notifications/model.ts';
import type { ExpiredLease, PauseEntry } from '../../notifications/status.ts';
import type { CycleInput, CycleResult, QueueStore } from '../port/queue.ts';
import {
  type AppliedRow,
  cellsOf,
  cycleProgram,
  promotionTurns,
  type QueueDriver,
  type QueueGroup,
  runAsync,
  statsGrid,
} from '../queue-core.ts';
import type { Query, Sql } from './connect.ts';
import { storeInboxOn } from './inbox.ts';
import { frontRank, promote, readyIndexed } from './lanes.ts';
import { createPostgresOutcomeCounter, type OutcomeCounter } from './outcome-counts.ts';
import { awaitEach, pipelinedTransaction, type Send } from './pipelined.ts';
import { claimPriorityOn } from './queue-claim.ts';
import { categoriesAmongOn, dropPushTargetsOn, recipientsAmongOn } from './recipients.ts';
import { addSuppressionsOn, matchOn } from './suppressions.ts';

const json = (value: unknown) => JSON.stringify(value);

/** The promotion statement around its list of seqs (a subquery given as a fragment). */
const PROMOTE = promote('\u0000', 'FOR UPDATE SKIP LOCKED').split('\u0000') as [string, string];

/**
 * The queue's primitives as PostgreSQL statements on one transaction, set-based: a batch of
 * transitions, events or copies is one statement whatever its size, which is what keeps
 * completion off the critical path at thousands a second. The writes whose answer the program
 * does not read (events, sandbox copies, the delivery history's count) go through `send`: on the
 * urgent lane's pipelined transactions (pipelined.ts) they do not wait for their answers.
 */
function driverOn(tx: Query, countOutcomes: OutcomeCounter, send: Send = awaitEach): QueueDriver {
  // These waiting rows back to ready, ranked as src/store/lanes.ts says (one statement for both
  // databases, promote): a retry or a hold regains its place at the front, a scheduled row joins
  // its tenant's line. SKIP LOCKED: a row another worker is promoting is left to it.
  const promoteRows = async (first: PendingQuery<Row[]>) => {
    const rows = await tx`${tx.unsafe(PROMOTE[0])}${first}${tx.unsafe(PROMOTE[1])}`;
    return rows.count;
  };
  return {
    async transition(transitions, now) {
      const input = transitions.map((t) => ({
        seq: t.seq,
        owner: t.owner,
        attempt: t.attempt,
        status: t.change.status,
        queue_state: t.change.queueState,
        due_at: t.change.dueAt,
        next_attempt_at: t.change.nextAttemptAt,
        delta: t.change.attemptsDelta,
        hold: t.change.hold,
        sent: t.change.sent !== undefined,
        provider: t.change.sent?.provider ?? t.change.tried ?? null,
        message_id: t.change.sent?.providerMessageId ?? null,
        address_key: t.change.sent?.addressKey ?? null,
      }));
      // MATERIALIZED: parsed once. Inline, the planner may rescan the function for every leased
      // row (128 × 128 parses measured at 3.4 ms of a 5 ms statement). The fence (owner and
      // attempt, still leased) means a worker whose lease was taken over changes nothing.
      return tx<AppliedRow[]>`
        WITH c AS MATERIALIZED (
          SELECT * FROM json_to_recordset(${json(input)}::text::json)
            AS c(seq bigint, owner text, attempt int, status text, queue_state text, due_at bigint,
                 next_attempt_at bigint, delta int, hold boolean, sent boolean, provider text, message_id text,
                 address_key text))
        UPDATE notifications n SET status = c.status, queue_state = c.queue_state, due_at = c.due_at,
          lane_rank = CASE WHEN c.queue_state = 'ready' THEN ${tx.unsafe(frontRank('n.lane_rank', 'n.priority', 'n.channel'))}
                      ELSE n.lane_rank END,
          next_attempt_at = c.next_attempt_at, attempts = n.attempts + c.delta,
          holds = CASE WHEN c.hold THEN n.holds + 1 ELSE 0 END,
          provider = COALESCE(c.provider, n.provider),
          provider_message_id = CASE WHEN c.sent THEN c.message_id ELSE n.provider_message_id END,
          address_key = CASE WHEN c.sent THEN c.address_key ELSE n.address_key END,
          lease_owner = NULL, lease_until = NULL, updated_at = GREATEST(${now}::bigint, n.created_at)
        FROM c
        WHERE n.seq = c.seq AND n.lease_owner = c.owner AND n.attempts = c.attempt AND n.queue_state = 'leased'
        RETURNING n.seq, n.id, n.tenant, n.channel`;
    },
    async appendEvents(events, now) {
      const rows = events.map((event, ord) => ({ ...event, ord }));
      await send(tx`INSERT INTO notification_events (notification_seq, type, at, attempt, provider, detail, source, locale)
        SELECT seq, type, COALESCE(at, ${now}::bigint), attempt, provider, detail, source, locale
        FROM json_to_recordset(${json(rows)}::text::json)
          AS e(seq bigint, type text, at bigint, attempt int, provider text, detail text, source text,
               locale text, ord int)
        ORDER BY ord`);
    },
    storeInbox: (entries, now) => storeInboxOn(tx, entries, now),
    async suppress(entries, now) {
      await addSuppressionsOn(tx, entries, now);
    },
    suppressions: (keys) => matchOn(tx, keys),
    recipients: (keys) => recipientsAmongOn(tx, keys),
    categories: (keys) => categoriesAmongOn(tx, keys),
    dropPushTargets: (gone, now) => dropPushTargetsOn(tx, gone, now),
    countOutcomes: (counts, now) => countOutcomes(tx, counts, now, send),
    async storeCopies(copies, now) {
      const rows = copies.map((c) => ({ ...c, recipient: json(c.recipient), content: json(c.content) }));
      await send(tx`INSERT INTO sandbox_messages (notification_seq, notification_id, tenant, channel, recipient, content, attempt, at)
        SELECT seq, id, tenant, channel, recipient, content, attempt, ${now}::bigint
        FROM json_to_recordset(${json(rows)}::text::json)
          AS s(seq bigint, id text, tenant text, channel text, recipient text, content text, attempt int)`);
    },
    // Each priority a literal, as in promoteDue, so that each arm reads its range of the
    // (priority, due_at) index.
    async dueCounts(now, upTo) {
      const arm = (priority: number) => tx`(SELECT count(*)::int FROM (SELECT 1 FROM notifications
        WHERE queue_state = 'waiting' AND priority = ${tx.unsafe(String(priority))} AND due_at <= ${now}
        LIMIT ${upTo}) d)`;
      const [row] = await tx<
        { due: number[] }[]
      >`SELECT ARRAY[${arm(0)}, ${arm(1)}, ${arm(2)}, ${arm(3)}] AS due`;
      return row?.due ?? PRIORITIES.map(() => 0);
    },
    async promoteTurn(priority, now, { after, looks, visits, quota, limit }) {
      // The walk (promote in queue-core.ts) in one statement: a recursive skip from tenant to
      // tenant through the (priority, tenant, due_at, seq) index, each step the next tenant's
      // first entry, which holds its earliest due_at (row 0 is the start, a NULL tenant the end),
      // and the first due rows of each tenant with some due. The priority is a literal, as in
      // promoteDue.
      const p = tx.unsafe(String(priority));
      const rows = await tx<{ tenant: string | null; seq: number | null }[]>`
        WITH RECURSIVE walk(tenant, due, visits, n) AS (
          SELECT ${after}::text, NULL::bigint, 0, 0
          UNION ALL
          SELECT nx.tenant, nx.due_at, walk.visits + CASE WHEN nx.due_at <= ${now} THEN 1 ELSE 0 END, walk.n + 1
          FROM walk LEFT JOIN LATERAL (
            SELECT x.tenant, x.due_at FROM notifications x
            WHERE x.queue_state = 'waiting' AND x.priority = ${p} AND x.tenant > walk.tenant
            ORDER BY x.tenant, x.due_at LIMIT 1) nx ON true
          WHERE walk.tenant IS NOT NULL AND walk.visits < ${visits} AND walk.n < ${looks})
        SELECT walk.tenant, d.seq FROM walk LEFT JOIN LATERAL (
          SELECT y.seq, y.due_at FROM notifications y
          WHERE y.queue_state = 'waiting' AND y.priority = ${p} AND y.tenant = walk.tenant AND y.due_at <= ${now}
          ORDER BY y.due_at, y.seq LIMIT ${quota}) d ON walk.due <= ${now}
        ORDER BY walk.n, d.due_at, d.seq`;
      const seqs: number[] = [];
      let last: string | null = after;
      for (const row of rows) {
        if (seqs.length === limit) break;
        last = row.tenant;
        if (row.seq !== null) seqs.push(row.seq);
      }
      if (seqs.length === 0) return { promoted: 0, last };
      return { promoted: await promoteRows(tx`SELECT unnest(${seqs}::bigint[]) AS seq`), last };
    },
    promoteDue: (priority, now, limit) =>
      // The priority a literal, so that the statement reads its range of the (priority, due_at)
      // index; with the priority a parameter PostgreSQL read the due_at index and filtered:
      // 200 ms with 300,000 LOW due, against 1 ms.
      promoteRows(tx`SELECT seq FROM notifications
        WHERE queue_state = 'waiting' AND priority = ${tx.unsafe(String(priority))} AND due_at <= ${now}
        ORDER BY due_at, seq LIMIT ${limit}`),
    // SKIP LOCKED: two workers reaping at once split the rows between them.
    expiredLeases: (now, limit) => tx<ExpiredLease[]>`
      SELECT seq, lease_owner AS owner, attempts FROM notifications
       WHERE queue_state = 'leased' AND lease_until < ${now}
       ORDER BY lease_until, seq LIMIT ${limit} FOR UPDATE SKIP LOCKED`,
    claimPriority: claimPriorityOn(tx),
    // The priority a literal, so that each channel's count reads its range of the ready index in
    // claim order, as SQLite's does (an unordered LIMIT read whichever rows the plan met first);
    // no lock taken.
    async readyCount(priority, channels, upTo, before) {
      const [row] = await tx<{ ready: number; waited: number }[]>`
        SELECT count(*)::int AS ready, count(*) FILTER (WHERE r.updated_at < ${before})::int AS waited
        FROM unnest(${channels as string[]}::text[]) AS c(channel)
        CROSS JOIN LATERAL (SELECT updated_at FROM notifications
          WHERE ${tx.unsafe(readyIndexed())} AND priority = ${tx.unsafe(String(priority))}
            AND channel = c.channel ORDER BY lane_rank, seq LIMIT ${upTo}) r`;
      return row ?? { ready: 0, waited: 0 };
    },
    pauses: (limit) => tx<PauseEntry[]>`SELECT priority, channel, paused_at AS "pausedAt",
      resumed_at AS "resumedAt" FROM queue_pauses ORDER BY id DESC LIMIT ${limit}`,
    async hasThrottled(seq, since) {
      const rows = await tx`SELECT 1 FROM notification_events
        WHERE notification_seq = ${seq} AND type = 'THROTTLED' AND at >= ${since} LIMIT 1`;
      return rows.length > 0;
    },
    async nextDueAt() {
      const [next] = await tx<{ due: number | null }[]>`
        SELECT min(due_at) AS due FROM notifications WHERE queue_state = 'waiting'`;
      return next?.due ?? null;
    },
  };
}

/** The urgent lane's cycles that claim, and those that only write completions. */
export type UrgentPart = 'claims' | 'writes';

/**
 * The PostgreSQL queue. A cycle is one transaction (complete, promote, reap, claim: one commit),
 * decided by the same program as SQLite's; any number of worker processes run cycles at once.
 * The urgent lane's cycles (`input.urgent`) run on `urgentSql`, connections of their own: one for
 * the cycles that claim, one for those that only write completions, each running one cycle after
 * the other, so that a CRITICAL's completion never waits for a claim cycle in progress nor a claim
 * for a write. With the pool's connections all taken (a step, the callback sender's writes,
 * renewals), the lane's BEGIN waited for one of them to end, or was pipelined behind a LOW
 * statement on a busy one. These connections commit without waiting for the WAL flush from the
 * start (connect.ts, asyncCommit), as SET LOCAL does below: one round trip fewer per cycle. Their
 * transactions are pipelined (pipelined.ts): a claim cycle waits for three answers (BEGIN with the
 * CRITICAL claim, which reads the pauses, the HIGH claim unless none is ready, the events with
 * COMMIT), a completion's for two
 * (BEGIN with the completion, then its copies, events, history and COMMIT).
 */
export function createPostgresQueue(sql: Sql, urgentSql: (part: UrgentPart) => Sql): QueueStore {
  const turns = promotionTurns();
  const countOutcomes = createPostgresOutcomeCounter();
  const inTx = <T>(work: (tx: Query) => Promise<T>) => sql.begin(work) as Promise<T>;
  // One urgent cycle at a time on each connection: a transaction is not shared.
  const turnsOf: Record<UrgentPart, Promise<unknown>> = {
    claims: Promise.resolve(),
    writes: Promise.resolve(),
  };
  const urgentCycle = (input: CycleInput): Promise<CycleResult> => {
    const part: UrgentPart = input.claim ? 'claims' : 'writes';
    const run = turnsOf[part].then(() =>
      pipelinedTransaction(urgentSql(part), (tx, send) =>
        runAsync(cycleProgram(input, turns), driverOn(tx, countOutcomes, send)),
      ),
    ) as Promise<CycleResult>;
    turnsOf[part] = run.catch(() => undefined);
    return run;
  };
  return {
    async openLanes() {
      await Promise.all((['claims', 'writes'] as const).map((part) => urgentSql(part)`SELECT 1`));
    },
    cycle(input) {
      if (input.urgent) return urgentCycle(input);
      return inTx(async (tx): Promise<CycleResult> => {
        // As on SQLite (synchronous=NORMAL for the worker): a cycle's commit need not wait for
        // the WAL flush. A crash of PostgreSQL can lose only the last claims and completions,
        // which at-least-once delivery redoes (the row is still ready or leased); acceptance
        // keeps full durability, since a 201 must survive.
        await tx`SET LOCAL synchronous_commit = off`;
        return runAsync(cycleProgram(input, turns), driverOn(tx, countOutcomes));
      });
    },
    async renew(owner, leases, until) {
      if (leases.length === 0) return 0;
      const input = json(leases.map((l) => ({ seq: l.seq, attempt: l.attempt })));
      const rows = await sql`
        WITH l AS MATERIALIZED (SELECT * FROM json_to_recordset(${input}::text::json) AS l(seq bigint, attempt int))
        UPDATE notifications n SET lease_until = ${until} FROM l
        WHERE n.seq = l.seq AND n.lease_owner = ${owner} AND n.attempts = l.attempt AND n.queue_state = 'leased'`;
      return rows.count;
    },
    async stats(tenant, now = Number.MAX_SAFE_INTEGER) {
      // One arm per state, each with its state as a literal so that it reads that state's partial
      // index (a parameter would not match the index's predicate in a generic plan). With
      // `queue_state IN (...)` PostgreSQL scanned the whole table, every notification ever sent,
      // on each poll of the dashboard (measured at 300,000 rows: 29 to 42 ms a call, against 0.5
      // to 0.6 ms).
      const ofTenant = tenant === undefined ? sql`` : sql`AND tenant = ${tenant}`;
      // A tenant's ready rows are read from its line index, everyone's from the ready index.
      const ready =
        tenant === undefined ? sql.unsafe(readyIndexed()) : sql`queue_state = 'ready' ${ofTenant}`;
      const groups = await sql<QueueGroup[]>`
        SELECT priority, channel, 'ready' AS state, count(*)::int AS n, min(created_at) AS oldest
          FROM notifications WHERE ${ready} GROUP BY priority, channel
        UNION ALL
        SELECT priority, channel, CASE WHEN due_at > ${now} THEN 'scheduled' ELSE 'waiting' END,
               count(*)::int, min(created_at)
          FROM notifications WHERE queue_state = 'waiting' ${ofTenant} GROUP BY 1, 2, 3
        UNION ALL
        SELECT priority, channel, 'leased', count(*)::int, NULL
          FROM notifications WHERE queue_state = 'leased' ${ofTenant} GROUP BY priority, channel`;
      const paused = await sql<{ priority: number; channel: string }[]>`
        SELECT priority, channel FROM queue_pauses WHERE resumed_at IS NULL`;
      return statsGrid(groups, paused);
    },
    setPaused: (selector, paused, now) =>
      inTx(async (tx) => {
        for (const { priority, channel } of cellsOf(selector)) {
          if (paused) {
            await tx`INSERT INTO queue_pauses (priority, channel, paused_at) VALUES (${priority}, ${channel}, ${now})
                     ON CONFLICT DO NOTHING`;
          } else {
            await tx`UPDATE queue_pauses SET resumed_at = ${now}
                     WHERE priority = ${priority} AND channel = ${channel} AND resumed_at IS NULL`;
          }
        }
      }),
  };
}
