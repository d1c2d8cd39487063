import { notificationId } from '../../notifications/ids.ts';
import { PRIORITIES, priorityRank } from '../../notifications/model.ts';
import { advanceRun, type Op, type OpAnswer } from '../../workflows/advance.ts';
import { type DueRunsDriver, dueRuns } from '../due-runs.ts';
import {
  type Definitions,
  definitionKey,
  type NewRun,
  type NewTrigger,
  type RunFilter,
  type RunRecord,
  type RunStart,
  type TriggerFanOutStep,
  type TriggerHit,
  type TriggerItem,
  type WorkflowRunStore,
} from '../port/workflow-runs.ts';
import { promotionTurns, runSync, walkTenants } from '../queue-core.ts';
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
import { joinRank } from './lanes.ts';
import { preparedOnce, type SqliteDb } from './open.ts';

const RANKS = PRIORITIES.map((_, rank) => rank);

function prepare(db: SqliteDb) {
  return {
    insertTrigger: db.prepare(
      `INSERT INTO workflow_triggers (id, tenant, workflow_key, version, steps, topic_key, priority, locale, variables,
         scheduled_at, idempotency_key, request_hash, answer, pending, advanced_at, created_at, trace_context)
       VALUES (@id, @tenant, @workflowKey, @version, @steps, @topic, @priority, @locale, @variables, @scheduledAt,
         @idempotencyKey, @requestHash, @answer, @pending, @createdAt, @createdAt, @traceContext)
       ON CONFLICT DO NOTHING`,
    ),
    byKey: db.prepare<[string, string], { answer: string; request_hash: string | null; created_at: number }>(
      'SELECT answer, request_hash, created_at FROM workflow_triggers WHERE tenant = ? AND idempotency_key = ?',
    ),
    releaseKey: db.prepare(
      'UPDATE workflow_triggers SET idempotency_key = NULL WHERE tenant = ? AND idempotency_key = ?',
    ),
    // Positional: a run's id and recipient, then its trigger's columns (insertRuns binds one array a trigger).
    insertRun: db.prepare(
      `INSERT INTO workflow_runs (id, recipient_id, tenant, workflow_key, version, trigger_id, priority, locale,
         variables, steps, due_at, created_at, updated_at, trace_context, status, step_index)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    // A run's status change in the status log (rows-status.ts, runEventSeq), with the change.
    logRun: db.prepare<[number, string, number]>(
      'INSERT INTO notification_events (notification_seq, type, at) VALUES (?, ?, ?)',
    ),
    one: db.prepare<[string, string], RunRow>(
      `SELECT ${RUN_COLUMNS} FROM workflow_runs WHERE tenant = ? AND id = ?`,
    ),
    cancel: db.prepare<{ tenant: string; id: string; now: number }>(
      `UPDATE workflow_runs SET status = 'CANCELLED', due_at = NULL, updated_at = @now
       WHERE tenant = @tenant AND id = @id AND status IN (${LIVE_RUN_STATUSES_SQL})`,
    ),
    // A cancelled run's open digest goes with it: later runs open a new one rather than join a run that will not send.
    dropDigest: db.prepare(
      `DELETE FROM workflow_digests WHERE tenant = @tenant AND workflow_key = @workflowKey AND version = @version
         AND step_index = @stepIndex AND recipient_id = @recipientId AND run_id = @id`,
    ),
    headDue: db
      .prepare<[number], number>(
        'SELECT due_at FROM workflow_runs WHERE priority = ? AND due_at IS NOT NULL ORDER BY due_at LIMIT 1',
      )
      .pluck(),
    due: db.prepare<{ rank: number; now: number; limit: number }, RunRow>(
      `SELECT ${RUN_COLUMNS} FROM workflow_runs WHERE priority = @rank AND due_at IS NOT NULL AND due_at <= @now
       ORDER BY due_at LIMIT @limit`,
    ),
    dueUpTo: db
      .prepare<{ rank: number; now: number; upTo: number }, number>(
        `SELECT count(*) FROM (SELECT 1 FROM workflow_runs
           WHERE priority = @rank AND due_at IS NOT NULL AND due_at <= @now LIMIT @upTo)`,
      )
      .pluck(),
    // The tenants' walk (store/due-runs.ts), each a seek into the (priority, tenant, due_at) index:
    // the next tenant's first entry, which holds its earliest due time, then its first due runs
    // (`+due_at` keeps SQLite off the (priority, due_at) index, a range of every tenant's due runs).
    nextTenant: db.prepare<{ rank: number; after: string }, { tenant: string; due_at: number }>(
      `SELECT tenant, due_at FROM workflow_runs WHERE priority = @rank AND due_at IS NOT NULL AND tenant > @after
       ORDER BY tenant, due_at LIMIT 1`,
    ),
    tenantDue: db.prepare<{ rank: number; tenant: string; now: number; limit: number }, RunRow>(
      `SELECT ${RUN_COLUMNS} FROM workflow_runs
       WHERE priority = @rank AND tenant = @tenant AND due_at IS NOT NULL AND +due_at <= @now
       ORDER BY due_at LIMIT @limit`,
    ),
    save: db.prepare(
      `UPDATE workflow_runs SET status = @status, step_index = @stepIndex, steps = @steps, digest = @digest,
         due_at = @dueAt, updated_at = @now WHERE id = @id`,
    ),
    template: db.prepare<
      { tenant: string; key: string },
      { version: number; channel: string; category: string | null }
    >(
      `SELECT t.current_version AS version, t.channel, v.category FROM templates t
       JOIN template_versions v ON v.tenant = t.tenant AND v.key = t.key AND v.version = t.current_version
       WHERE t.tenant = @tenant AND t.key = @key`,
    ),
    joinAt: db.prepare(`SELECT ${joinRank('@tenant', '@priority', '@channel')}`).pluck(),
    send: db.prepare(
      `INSERT INTO notifications (id, tenant, channel, priority, status, queue_state, due_at, recipient, template_key,
         template_version, content, variables, metadata, attempts, created_at, updated_at, lane_rank, locale, category,
         workflow_run_id, trace_context)
       VALUES (@id, @tenant, @channel, @priority, 'QUEUED', 'ready', NULL, @recipient, @templateKey, @templateVersion,
         @content, @variables, NULL, 0, @now, @now, @rank, @locale, @category, @runId, @traceContext)`,
    ),
    notifications: db.prepare<{ tenant: string; recipientId: string; ids: string }, RunNotificationRow>(
      `SELECT n.id, n.channel, n.status, EXISTS (SELECT 1 FROM inbox_messages m
           WHERE m.tenant = n.tenant AND m.recipient_id = @recipientId AND m.notification_seq = n.seq
             AND m.read_at IS NOT NULL) AS read
       FROM notifications n WHERE n.tenant = @tenant AND n.id IN (SELECT value FROM json_each(@ids))`,
    ),
    openDigest: db.prepare(
      `INSERT INTO workflow_digests (tenant, workflow_key, version, step_index, recipient_id, key_value, run_id, until,
         count, items)
       VALUES (@tenant, @workflowKey, @version, @index, @recipientId, @keyValue, @runId, @until, 1, @items)
       ON CONFLICT DO NOTHING`,
    ),
    joinDigest: db.prepare(
      `UPDATE workflow_digests SET count = count + 1, items = substr(items, 1, length(items) - 1) || ',' || @item || ']'
       WHERE tenant = @tenant AND workflow_key = @workflowKey AND version = @version AND step_index = @index
         AND recipient_id = @recipientId AND key_value = @keyValue AND until > @now`,
    ),
    closeDigest: db.prepare<Record<string, unknown>, { count: number; items: string }>(
      `DELETE FROM workflow_digests WHERE tenant = @tenant AND workflow_key = @workflowKey AND version = @version
         AND step_index = @index AND recipient_id = @recipientId AND key_value = @keyValue AND run_id = @runId
       RETURNING count, items`,
    ),
    pruneMarks: db.prepare(
      `DELETE FROM workflow_throttle_marks WHERE tenant = @tenant AND workflow_key = @workflowKey
         AND step_index = @index AND recipient_id = @recipientId AND key_value = @keyValue AND at <= @since`,
    ),
    countMarks: db
      .prepare(
        `SELECT count(*) FROM workflow_throttle_marks WHERE tenant = @tenant AND workflow_key = @workflowKey
           AND step_index = @index AND recipient_id = @recipientId AND key_value = @keyValue AND at > @since`,
      )
      .pluck(),
    mark: db.prepare(
      `INSERT INTO workflow_throttle_marks (tenant, workflow_key, step_index, recipient_id, key_value, at, run_id)
       VALUES (@tenant, @workflowKey, @index, @recipientId, @keyValue, @now, @runId)`,
    ),
    hasFanOut: db.prepare('SELECT 1 FROM workflow_triggers WHERE pending = 1 LIMIT 1').pluck(),
    nextTrigger: db.prepare<[], TopicTriggerRow>(
      `SELECT seq, id, tenant, workflow_key, version, steps, topic_key, priority, locale, variables, scheduled_at,
         fanned_to, until_seq, trace_context FROM workflow_triggers WHERE pending = 1 ORDER BY advanced_at LIMIT 1`,
    ),
    snapshot: db.prepare('SELECT max(seq) FROM topic_subscribers').pluck(),
    members: db
      .prepare<{ tenant: string; topic: string; from: string; until: number; chunk: number }, string>(
        `SELECT recipient_id FROM topic_subscribers WHERE tenant = @tenant AND topic_key = @topic
           AND recipient_id > @from AND seq <= @until ORDER BY recipient_id LIMIT @chunk`,
      )
      .pluck(),
    advanceTrigger: db.prepare(
      `UPDATE workflow_triggers SET pending = @pending, until_seq = @until, fanned_to = @to, runs = runs + @made,
         advanced_at = @now WHERE seq = @seq`,
    ),
    // The recipients' index, entered in bulk (migration 491): the runs after `up_to` are not in it yet.
    indexedUpTo: db.prepare<[], number>('SELECT up_to FROM workflow_runs_indexed').pluck(),
    lastRun: db.prepare<[number], { seq: number; created_at: number }>(
      'SELECT seq, created_at FROM workflow_runs WHERE seq > ? ORDER BY seq DESC LIMIT 1',
    ),
    enterRecipients: db.prepare<{ from: number; to: number }>(
      `INSERT INTO workflow_run_recipients (tenant, recipient_id, seq)
       SELECT tenant, recipient_id, seq FROM workflow_runs WHERE seq > @from AND seq <= @to
       ORDER BY tenant, recipient_id, seq`,
    ),
    setIndexed: db.prepare<[number]>('UPDATE workflow_runs_indexed SET up_to = ?'),
    waiting: db.prepare<[], { workflow_key: string; n: number }>(
      "SELECT workflow_key, count(*) AS n FROM workflow_runs WHERE status = 'WAITING' GROUP BY workflow_key",
    ),
  };
}

const statements = preparedOnce(prepare);

/** The SQLite implementation of the workflow runs port (see port/workflow-runs.ts). */
export function createSqliteWorkflowRuns(db: SqliteDb): WorkflowRunStore {
  const s = statements(db);

  const insertRuns = (t: NewTrigger, runs: NewRun[], start?: RunStart | null) => {
    const c = runColumnsOf(t, start);
    const values: unknown[] = [
      '',
      '',
      c.tenant,
      c.workflowKey,
      c.version,
      c.triggerId,
      c.priority,
      c.locale,
      c.variables,
      c.steps,
      c.dueAt,
      c.now,
      c.now,
      c.traceContext,
      c.status,
      c.stepIndex,
    ];
    for (const run of runs) {
      values[0] = run.id;
      values[1] = run.recipientId;
      const seq = Number(s.insertRun.run(values).lastInsertRowid);
      // One row, RUNNING or the status the trigger's first steps left it in (which implies the RUNNING: run-starts.ts).
      s.logRun.run(runEventSeq(seq), c.status, t.createdAt);
    }
  };

  /** One trigger and its runs, inside the caller's transaction. */
  const storeTrigger = ({ trigger: t, runs, start }: TriggerItem, since: number): TriggerHit | undefined => {
    const values = triggerValues(t);
    if (s.insertTrigger.run(values).changes === 0) {
      // The Idempotency-Key is taken: a live one answers; an expired one is released for this trigger.
      const hit = s.byKey.get(t.tenant, t.idempotencyKey as string);
      if (hit && hit.created_at >= since) return { answer: hit.answer, requestHash: hit.request_hash };
      s.releaseKey.run(t.tenant, t.idempotencyKey);
      s.insertTrigger.run(values);
    }
    insertRuns(t, runs, start);
    return undefined;
  };
  const triggerMany = db.transaction((items: TriggerItem[], since: number) =>
    items.map((item) => storeTrigger(item, since)),
  );

  /** Answers one of the step rules' questions inside the step's transaction. */
  const answer = (run: RunRecord, op: Op, now: number): OpAnswer => {
    const at = {
      tenant: run.tenant,
      workflowKey: run.workflowKey,
      version: run.version,
      recipientId: run.recipientId,
      runId: run.id,
    };
    switch (op.op) {
      case 'send': {
        const { step } = op;
        let template: { version: number; channel: string; category: string | null } | undefined;
        if (step.template !== undefined) {
          template = s.template.get({ tenant: run.tenant, key: step.template });
          if (!template || template.channel !== step.channel) return null;
        }
        const priority = priorityRank(run.priority);
        const id = notificationId(now);
        s.send.run({
          id,
          tenant: run.tenant,
          channel: step.channel,
          priority,
          recipient: JSON.stringify({ id: run.recipientId }),
          templateKey: step.template ?? null,
          templateVersion: template?.version ?? null,
          content: step.content === undefined ? null : JSON.stringify(step.content),
          variables: JSON.stringify(op.variables),
          now,
          rank: s.joinAt.get({ tenant: run.tenant, priority, channel: step.channel }),
          locale: run.locale,
          category: op.category ?? template?.category ?? null,
          runId: run.id,
          traceContext: run.traceContext,
        });
        return id;
      }
      case 'notifications':
        return s.notifications
          .all({ tenant: run.tenant, recipientId: run.recipientId, ids: JSON.stringify(op.ids) })
          .map(runNotificationFromRow);
      case 'digest': {
        const key = { ...at, index: op.index, keyValue: op.keyValue };
        if (s.openDigest.run({ ...key, until: op.until, items: openItems(op.item) }).changes === 1)
          return 'opened';
        const item = JSON.stringify(op.item);
        return s.joinDigest.run({ ...key, item, now }).changes === 1 ? 'joined' : 'busy';
      }
      case 'closeDigest': {
        const row = s.closeDigest.get({ ...at, index: op.index, keyValue: op.keyValue });
        return row ? digestOf(row) : loneDigest(run);
      }
      case 'throttle': {
        const key = { ...at, index: op.index, keyValue: op.keyValue, since: now - op.windowMs };
        s.pruneMarks.run(key);
        if ((s.countMarks.get(key) as number) >= op.limit) return false;
        s.mark.run({ ...key, now });
        return true;
      }
    }
  };

  const turns = promotionTurns();
  const driver: DueRunsDriver = {
    dueCounts: (now, upTo) => RANKS.map((rank) => s.dueUpTo.get({ rank, now, upTo }) as number),
    walk(rank, now, turn) {
      const { taken, last } = walkTenants(
        now,
        turn,
        (after) => s.nextTenant.get({ rank, after }),
        (tenant, limit) => s.tenantDue.all({ rank, tenant, now, limit }),
      );
      return { rows: taken, last };
    },
    inDueOrder: (rank, now, limit) => s.due.all({ rank, now, limit }),
  };

  const advance = db.transaction((now: number, chunk: number, definitions) => {
    const result = noAdvance();
    for (const row of runSync(dueRuns(now, chunk, turns), driver)) {
      const run = runFromRow(row);
      const definition = definitions.get(definitionKey(run.tenant, run.workflowKey, run.version));
      if (definition === undefined) {
        result.missing.push({ tenant: run.tenant, workflowKey: run.workflowKey, version: run.version });
        continue;
      }
      const steps = advanceRun(run, definition ?? undefined, now);
      let next = steps.next();
      while (!next.done) next = steps.next(answer(run, next.value, now));
      const state = next.value;
      s.save.run(stateValues(run, state, now));
      if (statusChanged(run, state)) s.logRun.run(runEventSeq(run.seq), state.status, now);
      countAdvance(result, run, state);
    }
    return result;
  });

  const fanOut = db.transaction(
    (now: number, chunk: number, definitions: Definitions): TriggerFanOutStep | null => {
      const t = s.nextTrigger.get();
      if (!t) return null;
      const definition = definitions.get(definitionKey(t.tenant, t.workflow_key, Number(t.version)));
      if (definition === undefined) return fanOutMissing(t);
      const until = t.until_seq === null ? ((s.snapshot.get() as number | null) ?? 0) : Number(t.until_seq);
      const members = s.members.all({
        tenant: t.tenant,
        topic: t.topic_key,
        from: t.fanned_to,
        until,
        chunk,
      });
      const start = topicStart(t, definition, now);
      insertRuns(topicTriggerOf(t, now), runsFor(members, now), start);
      const finished = members.length < chunk;
      s.advanceTrigger.run({
        pending: finished ? 0 : 1,
        until,
        to: members.at(-1) ?? t.fanned_to,
        made: members.length,
        now,
        seq: t.seq,
      });
      return { triggerId: t.id, made: members.length, finished, started: start?.status ?? 'RUNNING' };
    },
  );

  /** Enters the oldest runs not in the recipients' index yet, sorted by recipient (see the port). */
  const indexRecipients = db.transaction((most: number, quietBefore: number): number => {
    const from = s.indexedUpTo.get() as number;
    const last = s.lastRun.get(from);
    if (last === undefined) return 0;
    if (last.seq - from < most && last.created_at > quietBefore) return 0;
    const to = Math.min(last.seq, from + most);
    const entered = s.enterRecipients.run({ from, to }).changes;
    s.setIndexed.run(to);
    return entered;
  });

  const cancel = db.transaction((tenant: string, id: string, now: number) => {
    const row = s.one.get(tenant, id);
    if (!row) return null;
    const run = runFromRow(row);
    if (s.cancel.run({ tenant, id, now }).changes === 0) return 'ended' as const;
    s.logRun.run(runEventSeq(run.seq), 'CANCELLED', now);
    s.dropDigest.run(run);
    return runFromRow(s.one.get(tenant, id) as RunRow);
  });

  return {
    async trigger(t, runs, since) {
      return triggerMany.immediate([{ trigger: t, runs }], since)[0];
    },
    async triggerMany(items, since) {
      return triggerMany.immediate(items, since);
    },
    async findTrigger(tenant, key, since) {
      const hit = s.byKey.get(tenant, key);
      return hit && hit.created_at >= since ? { answer: hit.answer, requestHash: hit.request_hash } : null;
    },
    async get(tenant, id) {
      const row = s.one.get(tenant, id);
      return row ? runFromRow(row) : null;
    },
    async list(tenant, filter, page) {
      const where = ['tenant = @tenant', ...filterWhere(filter)];
      if (page.before !== undefined) where.push('seq < @before');
      const params = { tenant, ...filter, before: page.before, limit: page.limit };
      if (filter.recipientId === undefined) return listed(db, where, params);
      // A recipient's runs: those not in the recipients' index yet (after `up_to`, every one newer
      // than any indexed run), newest first, then the indexed ones. `up_to` is read once: the runs
      // up to it are all in the index (entered in the transaction that moved it), the ones after
      // it are read from the table whatever the index holds by then, so none is read twice or missed.
      const upTo = s.indexedUpTo.get() as number;
      const recent = listed(db, [...where, 'seq > @upTo'], { ...params, upTo });
      if (recent.length >= page.limit) return recent;
      const indexed = db
        .prepare<Record<string, unknown>, RunRow>(
          `SELECT ${RUN_COLUMNS} FROM (SELECT seq AS entry FROM workflow_run_recipients
             WHERE tenant = @tenant AND recipient_id = @recipientId AND seq <= @upTo
               ${page.before === undefined ? '' : 'AND seq < @before'})
           CROSS JOIN workflow_runs ON seq = entry WHERE ${['1', ...filterWhere({ ...filter, recipientId: undefined })].join(' AND ')}
           ORDER BY entry DESC LIMIT @limit`,
        )
        .all({ ...params, upTo, limit: page.limit - recent.length });
      return [...recent, ...indexed.map(runFromRow)];
    },
    async notifications(tenant, recipientId, ids) {
      return s.notifications
        .all({ tenant, recipientId, ids: JSON.stringify(ids) })
        .map(runNotificationFromRow);
    },
    async cancel(tenant, id, now) {
      return cancel.immediate(tenant, id, now);
    },
    async nextDue() {
      let earliest: number | null = null;
      for (const rank of RANKS) {
        const due = s.headDue.get(rank) as number | undefined;
        if (due !== undefined && (earliest === null || due < earliest)) earliest = due;
      }
      return earliest;
    },
    async advance(now, chunk, definitions) {
      return advance.immediate(now, chunk, definitions);
    },
    async hasFanOut() {
      return s.hasFanOut.get() !== undefined;
    },
    async fanOut(now, chunk, definitions) {
      return fanOut.immediate(now, chunk, definitions);
    },
    async indexRecipients(most, quietBefore) {
      return indexRecipients.immediate(most, quietBefore);
    },
    async counts() {
      return { waitingByWorkflow: Object.fromEntries(s.waiting.all().map((r) => [r.workflow_key, r.n])) };
    },
  };
}

/** Runs of the tenant's list (`where`), newest first, `limit` at most. */
function listed(db: SqliteDb, where: string[], params: Record<string, unknown>) {
  return db
    .prepare<Record<string, unknown>, RunRow>(
      `SELECT ${RUN_COLUMNS} FROM workflow_runs WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT @limit`,
    )
    .all(params)
    .map(runFromRow);
}

/** A run list's filters as SQL conditions (each bound by name). */
function filterWhere(filter: RunFilter): string[] {
  const where: string[] = [];
  if (filter.workflow !== undefined) where.push('workflow_key = @workflow');
  if (filter.recipientId !== undefined) where.push('recipient_id = @recipientId');
  if (filter.triggerId !== undefined) where.push('trigger_id = @triggerId');
  if (filter.status !== undefined) where.push('status = @status');
  return where;
}
