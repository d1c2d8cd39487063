// #52 (decision 0042): a `kill -9` of `npm start` (SQLite, triggers handed to the dispatch
// thread's connection by their group commit) while triggers arrive over HTTP: every trigger that
// was answered 201 is in the database with each of its runs and their RUNNING change, once each,
// and no run was stepped into its delay twice (decision 0053: the trigger takes that step).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { apiCall } from '../helpers/api-call.ts';
import { startDelayHerald } from '../helpers/delay-herald-process.ts';
import type { HeraldProcess } from '../helpers/herald-process.ts';

const ADMIN = { email: 'admin@example.com', password: 'trigger-crash-password-1' };
const PEOPLE = Array.from({ length: 10 }, (_, i) => `p${i}`);
/** Triggers sent at once; the process is killed once half of them have answered. */
const SENT = 60;

describe('triggers through a kill -9 (SQLite, dispatch thread)', () => {
  let herald: HeraldProcess | undefined;
  after(() => herald?.stop(2000));

  it('keeps every trigger answered 201, with its runs and their RUNNING once each', {
    timeout: 120_000,
  }, async () => {
    const started = await startDelayHerald('trigger-crash', ADMIN, PEOPLE);
    herald = started.herald;
    const { dataDir, base, token } = started;

    const answered: Array<{ triggerId: string; runs: Array<{ runId: string }> }> = [];
    const killed = herald;
    let kill!: () => void;
    const halfway = new Promise<void>((resolve) => {
      kill = resolve;
    });
    const sent = Array.from({ length: SENT }, async (_, i) => {
      const recipients = [PEOPLE[i % 10], PEOPLE[(i + 3) % 10], PEOPLE[(i + 7) % 10]];
      try {
        const made = await apiCall(base, token, 'POST', '/workflows/later/trigger', { recipients });
        if (made.status === 201) answered.push(made.json);
        if (answered.length >= SENT / 2) kill();
      } catch {
        // The connection died with the process: this trigger was never answered.
      }
    });
    await halfway;
    killed.child.kill('SIGKILL');
    await killed.exited;
    await Promise.all(sent);
    assert.ok(answered.length >= SENT / 2);

    const db = new Database(join(dataDir, 'herald.db'), { readonly: true, fileMustExist: true });
    try {
      const trigger = db.prepare('SELECT count(*) FROM workflow_triggers WHERE id = ?').pluck();
      const run = db.prepare('SELECT seq FROM workflow_runs WHERE id = ?').pluck();
      const changes = db
        .prepare<[number, string], number>(
          'SELECT count(*) FROM notification_events WHERE notification_seq = ? AND type = ?',
        )
        .pluck();
      const first = db
        .prepare<[number], string>(
          'SELECT type FROM notification_events WHERE notification_seq = ? ORDER BY id LIMIT 1',
        )
        .pluck();
      for (const made of answered) {
        assert.equal(trigger.get(made.triggerId), 1, `trigger ${made.triggerId} answered 201 is gone`);
        assert.equal(made.runs.length, 3);
        for (const { runId } of made.runs) {
          const seq = run.get(runId) as number | undefined;
          assert.ok(seq !== undefined, `run ${runId} of an answered trigger is gone`);
          // Its RUNNING once: a row of its own, or implied by a first row of WAITING (decision 0060).
          const implied = first.get(-seq) === 'WAITING' ? 1 : 0;
          assert.equal((changes.get(-seq, 'RUNNING') as number) + implied, 1, `run ${runId}'s RUNNING`);
          // Its delay was taken by the trigger (decision 0053) or by the engine since, never twice.
          assert.ok((changes.get(-seq, 'WAITING') as number) <= 1, `run ${runId} entered WAITING twice`);
        }
      }
      // No run, answered or not, was stepped into its delay twice: each WAITING once at most, and
      // a WAITING run has its change logged.
      const twice = db
        .prepare(
          `SELECT count(*) FROM (SELECT notification_seq FROM notification_events WHERE notification_seq < 0
             AND type = 'WAITING' GROUP BY notification_seq HAVING count(*) > 1)`,
        )
        .pluck();
      assert.equal(twice.get(), 0);
      const unlogged = db
        .prepare(
          `SELECT count(*) FROM workflow_runs r WHERE r.status = 'WAITING' AND NOT EXISTS (SELECT 1
             FROM notification_events e WHERE e.notification_seq = -r.seq AND e.type = 'WAITING')`,
        )
        .pluck();
      assert.equal(unlogged.get(), 0);
    } finally {
      db.close();
    }
  });
});
