import { notificationId } from '../../notifications/ids.ts';
import { PRIORITIES, priorityRank } from '../../notifications/model.ts';
import { isUrgent } from '../../notifications/wakeup.ts';
import { advanceRun, type Op, type OpAnswer } from '../../workflows/advance.ts';
import { type DueRunsDriver, dueRuns } from '../due-runs.ts';
import {
  definitionKey,
  type RunRecord,
  type TriggerHit,
  type TriggerItem,
  type WorkflowRunStore,
} from '../port/workflow-runs.ts';
import { promotionTurns, runAsync } from '../queue-core.ts';
import { runEventSeq } from '../rows-status.ts';
import {
  countAdvance,
  digestOf,
  fanOutMissing,
  LIVE_RUN_STATUSES_SQL,
  loneDigest,
  noAdvance,
  openItems,
  RUN_COLUMNS,
  type RunNotificationRow,
  type RunRow,
  runColumnsOf,
  runFromRow,
  runNotificationFromRow,
  runsFor,
  stateValues,
  statusChanged,
  type TopicTriggerRow,
  topicStart,
  topicTriggerOf,
  triggerValues,
} from '../rows-workflow-runs.ts';
import type { Query, Sql } from './connect.ts';
import { joinRank } from './lanes.ts';
import { RUNS_PAYLOAD, URGENT_PAYLOAD, WAKEUP_CHANNEL } from './wakeups.ts';

const RANKS = PRIORITIES.map((_, rank) => rank);
const JOIN_RANK = `SELECT ${joinRank('$1::text', '$2::smallint', '$3::text')} AS rank`;

/**
 * The engine's reads of due runs (store/due-runs.ts) in a step's transaction. Each locks the runs
 * it returns, `FOR UPDATE SKIP LOCKED`: another worker's step holds its runs, this one takes the
 * next ones, never the same. The priority is a literal, so that each statement reads its range of
 * the (priority, due_at) or (priority, tenant, due_at) index.
 */
function dueRunsOn(tx: Query): DueRunsDriver {
  const locked = (seqs: readonly number[], now: number) =>
    tx<RunRow[]>`SELECT ${tx.unsafe(RUN_COLUMNS)} FROM workflow_runs
      WHERE seq = ANY(${seqs as number[]}::bigint[]) AND due_at IS NOT NULL AND due_at <= ${now}
      ORDER BY due_at FOR UPDATE SKIP LOCKED`;
  return {
    async dueCounts(now, upTo) {
      const arm = (rank: number) => tx`(SELECT count(*)::int FROM (SELECT 1 FROM workflow_runs
        WHERE priority = ${tx.unsafe(String(rank))} AND due_at IS NOT NULL AND due_at <= ${now} LIMIT ${upTo}) d)`;
      const [row] = await tx<
        { due: number[] }[]
      >`SELECT ARRAY[${arm(0)}, ${arm(1)}, ${arm(2)}, ${arm(3)}] AS due`;
      return row?.due ?? RANKS.map(() => 0);
    },
    async walk(rank, now, { after, looks, visits, quota, limit }) {
      // The walk in one statement, as the queue's promoteTurn: a recursive skip from tenant to
      // tenant, each step the next tenant's first entry (its earliest due time; row 0 is the
      // start, a NULL tenant the end), and the first due runs of each tenant with some due. A
      // recursive query cannot lock: the runs it names are locked by a second statement. The
      // gate on `walk.due` is inside the second LATERAL, not in its ON: there PostgreSQL reads the
      // subquery for the start row and the end row too, and a tenant no run has ('' at the start)
      // read the whole due-time index (47 ms a row at a million runs due, decision 0068).
      const p = tx.unsafe(String(rank));
      const found = await tx<{ tenant: string | null; seq: number | null }[]>`
        WITH RECURSIVE walk(tenant, due, visits, n) AS (
          SELECT ${after}::text, NULL::bigint, 0, 0
          UNION ALL
          SELECT nx.tenant, nx.due_at, walk.visits + CASE WHEN nx.due_at <= ${now} THEN 1 ELSE 0 END, walk.n + 1
          FROM walk LEFT JOIN LATERAL (
            SELECT x.tenant, x.due_at FROM workflow_runs x
            WHERE x.priority = ${p} AND x.due_at IS NOT NULL AND x.tenant > walk.tenant
            ORDER BY x.tenant, x.due_at LIMIT 1) nx ON true
          WHERE walk.tenant IS NOT NULL AND walk.visits < ${visits} AND walk.n < ${looks})
        SELECT walk.tenant, d.seq FROM walk LEFT JOIN LATERAL (
          SELECT y.seq, y.due_at FROM workflow_runs y
          WHERE walk.due <= ${now} AND y.priority = ${p} AND y.tenant = walk.tenant AND y.due_at IS NOT NULL
            AND y.due_at <= ${now}
          ORDER BY y.due_at LIMIT ${quota}) d ON true
        ORDER BY walk.n, d.due_at`;
      const seqs: number[] = [];
      let last: string | null = after;
      for (const row of found) {
        if (seqs.length === limit) break;
        last = row.tenant;
        if (row.seq !== null) seqs.push(Number(row.seq));
      }
      return { rows: seqs.length === 0 ? [] : await locked(seqs, now), last };
    },
    inDueOrder: (rank, now, limit) => tx<RunRow[]>`
      SELECT ${tx.unsafe(RUN_COLUMNS)} FROM workflow_runs
      WHERE priority = ${tx.unsafe(String(rank))} AND due_at IS NOT NULL AND due_at <= ${now}
      ORDER BY due_at LIMIT ${limit} FOR UPDATE SKIP LOCKED`,
  };
}

/** A run of a turn where its steps left it (`moveRuns`). */
type MovedRun = ReturnType<typeof stateValues> & { seq: number };

/** The PostgreSQL implementation of the workflow runs port; same semantics as the SQLite one. */
export function createPostgresWorkflowRuns(sql: Sql): WorkflowRunStore {
  const turns = promotionTurns();
  /**
   * The runs of several triggers in one statement: each run's own columns as arrays, its
   * trigger's once (joined by the trigger's place in `items`), in order; and each run's row in the
   * status log (rows-status.ts, runEventSeq: the seq negated): RUNNING, or the status its
   * trigger's first steps left it in, which implies the RUNNING (run-starts.ts).
   */
  const insertRuns = async (tx: Query, items: TriggerItem[]) => {
    const withRuns = items.filter((item) => item.runs.length > 0);
    if (withRuns.length === 0) return;
    const ts = withRuns.map((item) => runColumnsOf(item.trigger, item.start));
    const runs = withRuns.flatMap((item, at) => item.runs.map((run) => ({ ...run, at: at + 1 })));
    await tx`
      WITH t AS (
        SELECT * FROM unnest(${ts.map((t) => t.tenant)}::text[], ${ts.map((t) => t.workflowKey)}::text[],
          ${ts.map((t) => t.version)}::int[], ${ts.map((t) => t.triggerId)}::text[], ${ts.map((t) => t.priority)}::int[],
          ${ts.map((t) => t.locale)}::text[], ${ts.map((t) => t.variables)}::text[], ${ts.map((t) => t.steps)}::text[],
          ${ts.map((t) => t.dueAt)}::bigint[], ${ts.map((t) => t.now)}::bigint[], ${ts.map((t) => t.traceContext)}::text[],
          ${ts.map((t) => t.status)}::text[], ${ts.map((t) => t.stepIndex)}::int[])
          WITH ORDINALITY AS t(tenant, workflow_key, version, trigger_id, priority, locale, variables, steps, due_at,
            now, trace_context, status, step_index, n)),
      made AS (
        INSERT INTO workflow_runs (id, tenant, workflow_key, version, recipient_id, trigger_id, status, step_index,
          priority, locale, variables, steps, due_at, created_at, updated_at, trace_context)
        SELECT r.id, t.tenant, t.workflow_key, t.version, r.recipient_id, t.trigger_id, t.status, t.step_index,
          t.priority, t.locale, t.variables, t.steps, t.due_at, t.now, t.now, t.trace_context
        FROM unnest(${runs.map((r) => r.id)}::text[], ${runs.map((r) => r.recipientId)}::text[],
          ${runs.map((r) => r.at)}::int[]) WITH ORDINALITY AS r(id, recipient_id, at, n)
        JOIN t ON t.n = r.at
        ORDER BY r.n
        RETURNING seq, status, created_at)
      INSERT INTO notification_events (notification_seq, type, at)
      SELECT -made.seq, made.status, made.created_at FROM made ORDER BY made.seq`;
  };

  const hitOf = (row: { answer: string; request_hash: string | null }): TriggerHit => ({
    answer: row.answer,
    requestHash: row.request_hash,
  });

  /**
   * Triggers in one transaction: their rows in one statement, then one by one only those whose
   * Idempotency-Key was taken (a live one answers, an expired one is released for the new
   * trigger, as a lone trigger would), every new trigger's runs in one statement, and one wake-up.
   */
  const triggerMany = (items: TriggerItem[], since: number) =>
    sql.begin(async (tx) => {
      const vs = items.map((item) => triggerValues(item.trigger));
      // Rows whose Idempotency-Key is taken are left out (ON CONFLICT), to be settled one by one below.
      const insertTriggers = async (rows: typeof vs) => {
        const column = <K extends keyof (typeof vs)[number]>(key: K) => rows.map((v) => v[key]);
        const stored = await tx<{ id: string }[]>`
          INSERT INTO workflow_triggers (id, tenant, workflow_key, version, steps, topic_key, priority, locale,
            variables, scheduled_at, idempotency_key, request_hash, answer, pending, advanced_at, created_at,
            trace_context)
          SELECT id, tenant, workflow_key, version, steps, topic_key, priority, locale, variables, scheduled_at,
            idempotency_key, request_hash, answer, pending, created_at, created_at, trace_context
          FROM unnest(${column('id')}::text[], ${column('tenant')}::text[], ${column('workflowKey')}::text[],
            ${column('version')}::int[], ${column('steps')}::int[], ${column('topic')}::text[],
            ${column('priority')}::int[], ${column('locale')}::text[], ${column('variables')}::text[],
            ${column('scheduledAt')}::bigint[], ${column('idempotencyKey')}::text[], ${column('requestHash')}::text[],
            ${column('answer')}::text[], ${column('pending')}::int[], ${column('createdAt')}::bigint[],
            ${column('traceContext')}::text[])
            AS v(id, tenant, workflow_key, version, steps, topic_key, priority, locale, variables, scheduled_at,
              idempotency_key, request_hash, answer, pending, created_at, trace_context)
          ON CONFLICT DO NOTHING RETURNING id`;
        return stored.map((row) => row.id);
      };
      const inserted = new Set(await insertTriggers(vs));
      const results: Array<TriggerHit | undefined> = [];
      const made: TriggerItem[] = [];
      for (const [i, item] of items.entries()) {
        const t = item.trigger;
        if (!inserted.has(t.id)) {
          // The Idempotency-Key is taken (by an older trigger or an earlier one of this group).
          const [hit] = await tx<{ answer: string; request_hash: string | null; created_at: number }[]>`
            SELECT answer, request_hash, created_at FROM workflow_triggers
            WHERE tenant = ${t.tenant} AND idempotency_key = ${t.idempotencyKey} FOR UPDATE`;
          if (hit && Number(hit.created_at) >= since) {
            results.push(hitOf(hit));
            continue;
          }
          await tx`UPDATE workflow_triggers SET idempotency_key = NULL
            WHERE tenant = ${t.tenant} AND idempotency_key = ${t.idempotencyKey}`;
          // Taken again meanwhile by another transaction: this group fails (and is retried one by one).
          if ((await insertTriggers([vs[i] as (typeof vs)[number]])).length === 0)
            throw new Error(`workflow trigger ${t.id} could not take its Idempotency-Key`);
        }
        results.push(undefined);
        made.push(item);
      }
      await insertRuns(tx, made);
      // Wakes the workflow engine of every worker process (after the commit: NOTIFY waits for it).
      if (made.length > 0) await tx`SELECT pg_notify(${WAKEUP_CHANNEL}, ${RUNS_PAYLOAD})`;
      return results;
    });

  /** Answers one of the step rules' questions inside the step's transaction. */
  const answer = async (tx: Query, run: RunRecord, op: Op, now: number): Promise<OpAnswer> => {
    const { tenant, workflowKey, version, recipientId, id: runId } = run;
    switch (op.op) {
      case 'send': {
        const { step } = op;
        let template: { version: number; channel: string; category: string | null } | undefined;
        if (step.template !== undefined) {
          [template] = await tx<{ version: number; channel: string; category: string | null }[]>`
            SELECT t.current_version AS version, t.channel, v.category FROM templates t
            JOIN template_versions v ON v.tenant = t.tenant AND v.key = t.key AND v.version = t.current_version
            WHERE t.tenant = ${tenant} AND t.key = ${step.template}`;
          if (!template || template.channel !== step.channel) return null;
        }
        const priority = priorityRank(run.priority);
        const [rank] = await tx.unsafe<{ rank: number }[]>(JOIN_RANK, [tenant, priority, step.channel]);
        const id = notificationId(now);
        const hint = isUrgent(run.priority) ? URGENT_PAYLOAD : '';
        await tx`
          WITH ins AS (INSERT INTO notifications (id, tenant, channel, priority, status, queue_state, due_at, recipient,
              template_key, template_version, content, variables, metadata, attempts, created_at, updated_at,
              lane_rank, locale, category, workflow_run_id, trace_context)
            VALUES (${id}, ${tenant}, ${step.channel}, ${priority}::smallint, 'QUEUED', 'ready', NULL,
              ${JSON.stringify({ id: recipientId })}, ${step.template ?? null}, ${template?.version ?? null}::int,
              ${step.content === undefined ? null : JSON.stringify(step.content)}, ${JSON.stringify(op.variables)},
              NULL, 0, ${now}::bigint, ${now}::bigint, ${Number(rank?.rank ?? 0)}::bigint, ${run.locale},
              ${op.category ?? template?.category ?? null}, ${runId}, ${run.traceContext})
            RETURNING 1)
          SELECT pg_notify(${WAKEUP_CHANNEL}, ${hint}) FROM ins`;
        return id;
      }
      case 'notifications':
        return notificationsOf(tx, tenant, recipientId, op.ids);
      case 'digest': {
        const opened = await tx`
          INSERT INTO workflow_digests (tenant, workflow_key, version, step_index, recipient_id, key_value, run_id,
            until, count, items)
          VALUES (${tenant}, ${workflowKey}, ${version}, ${op.index}, ${recipientId}, ${op.keyValue}, ${runId},
            ${op.until}, 1, ${openItems(op.item)})
          ON CONFLICT DO NOTHING RETURNING 1`;
        if (opened.length === 1) return 'opened';
        // Another worker's run opened it (this insert waited for its commit): join it while it is open.
        const joined = await tx`
          UPDATE workflow_digests SET count = count + 1,
            items = substr(items, 1, length(items) - 1) || ',' || ${JSON.stringify(op.item)} || ']'
          WHERE tenant = ${tenant} AND workflow_key = ${workflowKey} AND version = ${version}
            AND step_index = ${op.index} AND recipient_id = ${recipientId} AND key_value = ${op.keyValue}
            AND until > ${now}
          RETURNING 1`;
        return joined.length === 1 ? 'joined' : 'busy';
      }
      case 'closeDigest': {
        const [row] = await tx<{ count: number; items: string }[]>`
          DELETE FROM workflow_digests WHERE tenant = ${tenant} AND workflow_key = ${workflowKey}
            AND version = ${version} AND step_index = ${op.index} AND recipient_id = ${recipientId}
            AND key_value = ${op.keyValue} AND run_id = ${runId}
          RETURNING count, items`;
        return row ? digestOf(row) : loneDigest(run);
      }
      case 'throttle': {
        // The window's count and the mark are one decision: runs of one recipient and key on two
        // workers take it in turns.
        const lock = JSON.stringify([tenant, workflowKey, op.index, recipientId, op.keyValue]);
        await tx`SELECT pg_advisory_xact_lock(hashtext('workflow throttle'), hashtext(${lock}))`;
        const since = now - op.windowMs;
        const where = tx`tenant = ${tenant} AND workflow_key = ${workflowKey} AND step_index = ${op.index}
          AND recipient_id = ${recipientId} AND key_value = ${op.keyValue}`;
        await tx`DELETE FROM workflow_throttle_marks WHERE ${where} AND at <= ${since}`;
        const [count] = await tx<{ n: number }[]>`
          SELECT count(*)::int AS n FROM workflow_throttle_marks WHERE ${where} AND at > ${since}`;
        if (Number(count?.n ?? 0) >= op.limit) return false;
        await tx`INSERT INTO workflow_throttle_marks (tenant, workflow_key, step_index, recipient_id, key_value, at,
            run_id)
          VALUES (${tenant}, ${workflowKey}, ${op.index}, ${recipientId}, ${op.keyValue}, ${now}, ${runId})`;
        return true;
      }
    }
  };

  const notificationsOf = async (q: Query, tenant: string, recipientId: string, ids: readonly string[]) => {
    const rows = await q<RunNotificationRow[]>`
      SELECT n.id, n.channel, n.status, EXISTS (SELECT 1 FROM inbox_messages m
          WHERE m.tenant = n.tenant AND m.recipient_id = ${recipientId} AND m.notification_seq = n.seq
            AND m.read_at IS NOT NULL) AS read
      FROM notifications n WHERE n.tenant = ${tenant} AND n.id = ANY(${ids as string[]}::text[])`;
    return rows.map(runNotificationFromRow);
  };

  /**
   * A turn's runs where their steps left them, in one statement (a statement a run made the
   * engine's turn of 1,000 runs 1,000 round trips). No answer of a turn reads workflow_runs, so
   * the rows may move after every run's steps are taken.
   */
  const moveRuns = async (tx: Query, moved: readonly MovedRun[], now: number) => {
    if (moved.length === 0) return;
    await tx`UPDATE workflow_runs w SET status = m.status, step_index = m.step_index, steps = m.steps,
        digest = m.digest, due_at = m.due_at, updated_at = ${now}::bigint
      FROM unnest(${moved.map((m) => m.seq)}::bigint[], ${moved.map((m) => m.status)}::text[],
        ${moved.map((m) => m.stepIndex)}::int[], ${moved.map((m) => m.steps)}::text[],
        ${moved.map((m) => m.digest) as string[]}::text[], ${moved.map((m) => m.dueAt) as number[]}::bigint[])
        AS m(seq, status, step_index, steps, digest, due_at)
      WHERE w.seq = m.seq`;
  };

  /** The runs' status changes in the status log, one statement for a turn's (see runEventSeq). */
  const logRuns = async (tx: Query, changes: ReadonlyArray<{ seq: number; status: string }>, now: number) => {
    if (changes.length === 0) return;
    await tx`INSERT INTO notification_events (notification_seq, type, at)
      SELECT s, t, ${now}::bigint
      FROM unnest(${changes.map((c) => runEventSeq(c.seq))}::bigint[], ${changes.map((c) => c.status)}::text[]) AS c(s, t)`;
  };

  const one = async (q: Query, tenant: string, id: string) => {
    const [row] = await q<RunRow[]>`
      SELECT ${q.unsafe(RUN_COLUMNS)} FROM workflow_runs WHERE tenant = ${tenant} AND id = ${id}`;
    return row ? runFromRow(row) : null;
  };

  return {
    async trigger(t, runs, since) {
      return (await triggerMany([{ trigger: t, runs }], since))[0];
    },
    triggerMany,
    async findTrigger(tenant, key, since) {
      const [hit] = await sql<{ answer: string; request_hash: string | null }[]>`
        SELECT answer, request_hash FROM workflow_triggers
        WHERE tenant = ${tenant} AND idempotency_key = ${key} AND created_at >= ${since}`;
      return hit ? hitOf(hit) : null;
    },
    get: (tenant, id) => one(sql, tenant, id),
    async list(tenant, f, page) {
      const rows = await sql<RunRow[]>`
        SELECT ${sql.unsafe(RUN_COLUMNS)} FROM workflow_runs WHERE tenant = ${tenant}
          ${f.workflow === undefined ? sql`` : sql`AND workflow_key = ${f.workflow}`}
          ${f.recipientId === undefined ? sql`` : sql`AND recipient_id = ${f.recipientId}`}
          ${f.triggerId === undefined ? sql`` : sql`AND trigger_id = ${f.triggerId}`}
          ${f.status === undefined ? sql`` : sql`AND status = ${f.status}`}
          ${page.before === undefined ? sql`` : sql`AND seq < ${page.before}`}
        ORDER BY seq DESC LIMIT ${page.limit}`;
      return rows.map(runFromRow);
    },
    notifications: (tenant, recipientId, ids) => notificationsOf(sql, tenant, recipientId, ids),
    async cancel(tenant, id, now) {
      return sql.begin(async (tx) => {
        // Waits for an engine step holding the run, so the cancel sees where that step left it.
        const [row] = await tx<RunRow[]>`
          SELECT ${tx.unsafe(RUN_COLUMNS)} FROM workflow_runs WHERE tenant = ${tenant} AND id = ${id} FOR UPDATE`;
        if (!row) return null;
        const run = runFromRow(row);
        const cancelled = await tx`
          UPDATE workflow_runs SET status = 'CANCELLED', due_at = NULL, updated_at = ${now}
          WHERE seq = ${run.seq} AND status IN (${tx.unsafe(LIVE_RUN_STATUSES_SQL)}) RETURNING 1`;
        if (cancelled.length === 0) return 'ended' as const;
        await logRuns(tx, [{ seq: run.seq, status: 'CANCELLED' }], now);
        await tx`DELETE FROM workflow_digests WHERE tenant = ${tenant} AND workflow_key = ${run.workflowKey}
          AND version = ${run.version} AND step_index = ${run.stepIndex} AND recipient_id = ${run.recipientId}
          AND run_id = ${run.id}`;
        return one(tx, tenant, id);
      });
    },
    async nextDue() {
      let earliest: number | null = null;
      for (const rank of RANKS) {
        const [row] = await sql<{ due_at: number }[]>`
          SELECT due_at FROM workflow_runs WHERE priority = ${rank} AND due_at IS NOT NULL ORDER BY due_at LIMIT 1`;
        const due = row === undefined ? undefined : Number(row.due_at);
        if (due !== undefined && (earliest === null || due < earliest)) earliest = due;
      }
      return earliest;
    },
    async advance(now, chunk, definitions) {
      return sql.begin(async (tx) => {
        const result = noAdvance();
        const changes: Array<{ seq: number; status: string }> = [];
        const moved: MovedRun[] = [];
        for (const row of await runAsync(dueRuns(now, chunk, turns), dueRunsOn(tx))) {
          const run = runFromRow(row);
          const definition = definitions.get(definitionKey(run.tenant, run.workflowKey, run.version));
          if (definition === undefined) {
            result.missing.push({ tenant: run.tenant, workflowKey: run.workflowKey, version: run.version });
            continue;
          }
          const steps = advanceRun(run, definition ?? undefined, now);
          let next = steps.next();
          while (!next.done) next = steps.next(await answer(tx, run, next.value, now));
          const state = next.value;
          moved.push({ ...stateValues(run, state, now), seq: run.seq });
          if (statusChanged(run, state)) changes.push({ seq: run.seq, status: state.status });
          countAdvance(result, run, state);
        }
        await moveRuns(tx, moved, now);
        await logRuns(tx, changes, now);
        return result;
      });
    },
    async hasFanOut() {
      const rows = await sql`SELECT 1 FROM workflow_triggers WHERE pending = 1 LIMIT 1`;
      return rows.length > 0;
    },
    async fanOut(now, chunk, definitions) {
      return sql.begin(async (tx) => {
        const [t] = await tx<TopicTriggerRow[]>`
          SELECT seq, id, tenant, workflow_key, version, steps, topic_key, priority, locale, variables, scheduled_at,
            fanned_to, until_seq, trace_context
          FROM workflow_triggers WHERE pending = 1 ORDER BY advanced_at LIMIT 1 FOR UPDATE SKIP LOCKED`;
        if (!t) return null;
        const definition = definitions.get(definitionKey(t.tenant, t.workflow_key, Number(t.version)));
        if (definition === undefined) return fanOutMissing(t);
        let until = t.until_seq === null ? null : Number(t.until_seq);
        if (until === null) {
          // Under the topic's lock no membership of it is in flight: the snapshot is exact (as a broadcast's).
          await tx`SELECT 1 FROM topics WHERE tenant = ${t.tenant} AND topic_key = ${t.topic_key} FOR UPDATE`;
          const [top] = await tx<{ s: number | null }[]>`SELECT max(seq) AS s FROM topic_subscribers`;
          until = Number(top?.s ?? 0);
        }
        const members = (
          await tx<{ recipient_id: string }[]>`
            SELECT recipient_id FROM topic_subscribers WHERE tenant = ${t.tenant} AND topic_key = ${t.topic_key}
              AND recipient_id > ${t.fanned_to} AND seq <= ${until} ORDER BY recipient_id LIMIT ${chunk}`
        ).map((r) => r.recipient_id);
        const start = topicStart(t, definition, now);
        await insertRuns(tx, [{ trigger: topicTriggerOf(t, now), runs: runsFor(members, now), start }]);
        const finished = members.length < chunk;
        await tx`UPDATE workflow_triggers SET pending = ${finished ? 0 : 1}, until_seq = ${until},
            fanned_to = ${members.at(-1) ?? t.fanned_to}, runs = runs + ${members.length}, advanced_at = ${now}
          WHERE seq = ${Number(t.seq)}`;
        return { triggerId: t.id, made: members.length, finished, started: start?.status ?? 'RUNNING' };
      });
    },
    async indexRecipients() {
      // Each insert enters its run into workflow_runs_recipient: nothing waits to be entered.
      return 0;
    },
    async counts() {
      const rows = await sql<{ workflow_key: string; n: number }[]>`
        SELECT workflow_key, count(*)::int AS n FROM workflow_runs WHERE status = 'WAITING' GROUP BY workflow_key`;
      return { waitingByWorkflow: Object.fromEntries(rows.map((r) => [r.workflow_key, Number(r.n)])) };
    },
  };
}
