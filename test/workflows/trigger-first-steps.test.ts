// #52 (decision 0053): a trigger takes its new runs' first steps when none asks the database (a
// delay): each run is written once, already WAITING with its due time, one row of the status log
// for its RUNNING and WAITING (decision 0060), on SQLite and PostgreSQL. A real Herald (auth and api only: no engine steps
// anything here) over HTTP, read from another connection at the 201. A run whose first step is a
// send, or scheduled later, is left RUNNING at its first step for the engine; a replay with the
// trigger's Idempotency-Key writes nothing more.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTriggerHerald, type TriggerHerald } from '../helpers/trigger-herald.ts';

const HOUR = 3_600_000;

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`a trigger's first steps (${kind})`, () => {
    let t: TriggerHerald;

    before(async () => {
      t = await startTriggerHerald(kind, 'herald_trigger_first_steps');
      const now = Date.now();
      const put = (key: string, steps: object[]) =>
        t.herald.store.workflows.put('default', key, { name: null, category: null, steps } as never, now);
      // A send whose `if` cannot hold before any notification is SKIPPED without the database.
      await put('skip-then-wait', [
        { type: 'send', channel: 'inapp', content: { title: 'Hi', body: 'failed' }, if: 'failed' },
        { type: 'delay', for: 'PT2H' },
        { type: 'send', channel: 'inapp', content: { title: 'Hi', body: 'later' } },
      ]);
      await put('send-first', [
        { type: 'send', channel: 'inapp', content: { title: 'Hi', body: 'now' } },
        { type: 'delay', for: 'PT1H' },
      ]);
    });
    after(() => t.close());

    const runOf = async (runId: string) => {
      const [row] = await t.read(
        'SELECT seq, status, step_index, steps, due_at FROM workflow_runs WHERE id = ?',
        runId,
      );
      assert.ok(row, `run ${runId} is not stored`);
      const changes = await t.read(
        'SELECT type, at FROM notification_events WHERE notification_seq = ? ORDER BY id',
        String(-Number(row.seq)),
      );
      return {
        status: row.status,
        stepIndex: Number(row.step_index),
        steps: JSON.parse(String(row.steps)) as Array<{ status: string; at?: number; until?: number }>,
        dueAt: row.due_at === null ? null : Number(row.due_at),
        changes: changes.map((c) => ({ type: c.type, at: Number(c.at) })),
      };
    };

    it('stores a run whose first step is a delay already WAITING, due at the trigger time plus the delay', async () => {
      const before = Date.now();
      const answer = await t.trigger({ recipients: ['u0', 'u1'] });
      const after = Date.now();
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      assert.equal(answer.body.runs.length, 2);
      for (const { runId } of answer.body.runs) {
        const run = await runOf(runId);
        assert.equal(run.status, 'WAITING');
        assert.equal(run.stepIndex, 0);
        const at = run.steps[0]?.at as number;
        assert.ok(at >= before && at <= after, `stepped at ${at}, not at its trigger`);
        assert.deepEqual(run.steps, [{ status: 'WAITING', at, until: at + HOUR }]);
        assert.equal(run.dueAt, at + HOUR);
        // One row of the status log, at the trigger's time, standing for both changes (decision
        // 0060): callbacks and streams read RUNNING, then RUNNING -> WAITING (store/run-starts.ts).
        assert.deepEqual(run.changes, [{ type: 'WAITING', at }]);
      }
      const entered = (await t.herald.deps.metrics.workflowRuns.get()).values;
      const waiting = entered.find((v) => v.labels.status === 'WAITING')?.value ?? 0;
      assert.ok(waiting >= 2, `herald_workflow_runs_total{status="WAITING"} is ${waiting}`);
    });

    it('goes past a send whose condition cannot hold yet, up to the delay', async () => {
      const answer = await t.trigger({ recipients: ['u2'] }, undefined, 'skip-then-wait');
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      const run = await runOf(answer.body.runs[0]?.runId as string);
      assert.equal(run.status, 'WAITING');
      assert.equal(run.stepIndex, 1);
      const at = run.steps[0]?.at as number;
      assert.deepEqual(run.steps, [
        { status: 'SKIPPED', at },
        { status: 'WAITING', at, until: at + 2 * HOUR },
        { status: 'PENDING' },
      ]);
      assert.equal(run.dueAt, at + 2 * HOUR);
    });

    it('leaves a run whose first step sends, or that is scheduled later, RUNNING at its first step', async () => {
      const now = Date.now();
      const send = await t.trigger({ recipients: ['u3'] }, undefined, 'send-first');
      assert.equal(send.status, 201, JSON.stringify(send.body));
      const sending = await runOf(send.body.runs[0]?.runId as string);
      assert.equal(sending.status, 'RUNNING');
      assert.equal(sending.stepIndex, 0);
      assert.deepEqual(sending.steps, [{ status: 'PENDING' }, { status: 'PENDING' }]);
      assert.deepEqual(
        sending.changes.map((c) => c.type),
        ['RUNNING'],
      );
      const later = now + 10 * HOUR;
      const scheduled = await t.trigger({ recipients: ['u4'], scheduledAt: new Date(later).toISOString() });
      assert.equal(scheduled.status, 201, JSON.stringify(scheduled.body));
      const waiting = await runOf(scheduled.body.runs[0]?.runId as string);
      assert.equal(waiting.status, 'RUNNING');
      assert.equal(waiting.dueAt, later);
      assert.deepEqual(waiting.steps, [{ status: 'PENDING' }]);
    });

    it('writes nothing more for a replay with its Idempotency-Key', async () => {
      const first = await t.trigger({ recipients: ['u5', 'u6'] }, 'first-steps-once');
      assert.equal(first.status, 201, JSON.stringify(first.body));
      const replay = await t.trigger({ recipients: ['u5', 'u6'] }, 'first-steps-once');
      assert.equal(replay.status, 200);
      assert.deepEqual(replay.body, first.body);
      const ofTrigger = await t.count(
        'SELECT count(*) AS n FROM workflow_runs WHERE trigger_id = ?',
        first.body.triggerId,
      );
      assert.equal(ofTrigger, 2);
      for (const { runId } of first.body.runs) {
        const run = await runOf(runId);
        assert.equal(run.status, 'WAITING');
        assert.deepEqual(
          run.changes.map((c) => c.type),
          ['WAITING'],
        );
      }
    });
  });
}
