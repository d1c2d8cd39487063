// #52 (decision 0030): a `kill -9` of a real `herald start` (SQLite) while runs wait in a delay
// and in a digest window. After the restart every run resumes where it was: the delay keeps its
// due time, the digest its members, and no step runs twice (one notification per send step); each
// run's status changes are in the status log once each.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import type { WorkflowStep } from '../../src/workflows/model.ts';
import { tempDir } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { type HeraldProcess, oneProcessEnv, startHeraldProcess } from '../helpers/herald-process.ts';
import { newTrigger } from '../helpers/workflow-fixtures.ts';

const ADMIN = { email: 'admin@example.com', password: 'workflow-crash-password-1' };
const PEOPLE = ['p0', 'p1', 'p2', 'p3', 'p4'];
const DIGESTED = 6;
const inapp = (body: string): WorkflowStep => ({
  type: 'send',
  channel: 'inapp',
  content: { title: 'Hi', body },
});

describe('workflow runs through a kill -9', () => {
  const started: HeraldProcess[] = [];
  after(async () => {
    await Promise.all(started.map((p) => p.stop(2000)));
  });

  it('resume every run where it was, with no step twice (SQLite)', { timeout: 120_000 }, async (t) => {
    const dataDir = tempDir('herald-workflow-crash-');
    const env = oneProcessEnv(dataDir, ADMIN, { HERALD_POLL_MS: '50' });
    const read = <R>(sql: string, ...params: unknown[]): R[] => {
      const db = new Database(join(dataDir, 'herald.db'), { readonly: true, fileMustExist: true });
      try {
        return db.prepare(sql).all(...params) as R[];
      } finally {
        db.close();
      }
    };
    const runs = (key: string) =>
      read<{ id: string; status: string; steps: string }>(
        'SELECT id, status, steps FROM workflow_runs WHERE workflow_key = ? ORDER BY seq',
        key,
      );
    const statuses = (key: string) => runs(key).map((r) => r.status);

    const first = await startHeraldProcess('workflow-crash-1', env);
    started.push(first);
    // Triggered once Herald runs, through a second connection as the API's would be.
    const store = createSqliteStore(dataDir);
    const now = Date.now();
    await store.recipients.put(
      'default',
      PEOPLE.map((id) => ({ id, profile: {} })),
      now,
    );
    const define = async (key: string, steps: WorkflowStep[]) =>
      (await store.workflows.put('default', key, { name: null, category: null, steps }, now)).workflow;
    const delayed = await define('delayed', [
      inapp('first'),
      { type: 'delay', for: 'PT6S' },
      inapp('second'),
    ]);
    const digest = await define('digested', [{ type: 'digest', for: 'PT6S' }, inapp('{{ digest.count }}')]);
    const trigger = async (w: typeof delayed, id: string, people: string[], variables: object = {}) =>
      store.workflowRuns.trigger(
        newTrigger(w, 'default', { id, variables: JSON.stringify(variables), createdAt: Date.now() }),
        people.map((recipientId, i) => ({ id: `${id}-${i}`, recipientId })),
        0,
      );
    await trigger(delayed, 'delay-trigger', PEOPLE);
    for (let i = 0; i < DIGESTED; i++) await trigger(digest, `digest-trigger-${i}`, ['p0'], { n: i });
    await store.close();

    await eventually(
      () =>
        statuses('delayed').every((s) => s === 'WAITING') &&
        statuses('digested').filter((s) => s === 'DIGESTED').length === DIGESTED - 1,
      30_000,
      'the runs to wait in their delay and digest',
    );
    const waitingSteps = new Map(runs('delayed').map((r) => [r.id, JSON.parse(r.steps)[1]]));
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await startHeraldProcess('workflow-crash-2', env);
    started.push(second);
    await eventually(
      () => statuses('delayed').every((s) => s === 'COMPLETED') && statuses('digested').includes('COMPLETED'),
      30_000,
      'the runs to resume and complete after the restart',
    );
    for (const run of runs('delayed')) {
      const steps = JSON.parse(run.steps) as Array<{ at?: number; until?: number; notificationId?: string }>;
      assert.deepEqual(
        { ...steps[1], status: 'WAITING' },
        waitingSteps.get(run.id),
        'the delay kept its due time',
      );
      assert.ok((steps[2]?.at ?? 0) >= (steps[1]?.until ?? Infinity), 'the second send came after the delay');
      const made = read<{ n: number }>(
        'SELECT count(*) AS n FROM notifications WHERE workflow_run_id = ?',
        run.id,
      );
      assert.equal(made[0]?.n, 2, 'one notification per send step');
    }
    assert.deepEqual(statuses('digested').sort(), ['COMPLETED', ...Array(DIGESTED - 1).fill('DIGESTED')]);
    const digestSends = read<{ variables: string }>(
      `SELECT n.variables FROM notifications n JOIN workflow_runs r ON r.id = n.workflow_run_id
       WHERE r.workflow_key = 'digested'`,
    );
    assert.equal(digestSends.length, 1, 'one notification for the whole digest');
    assert.equal(JSON.parse(digestSends[0]?.variables as string).digest.count, DIGESTED);
    // Each status change is in the status log once, committed with it (decision 0035): none lost
    // to the kill, none written twice after it.
    const logged = (key: string) => {
      const byRun = new Map<string, string[]>();
      for (const e of read<{ id: string; type: string }>(
        `SELECT r.id, e.type FROM workflow_runs r JOIN notification_events e ON e.notification_seq = -r.seq
         WHERE r.workflow_key = ? ORDER BY e.id`,
        key,
      ))
        byRun.set(e.id, [...(byRun.get(e.id) ?? []), e.type]);
      return [...byRun.values()].map((types) => types.join('>'));
    };
    assert.deepEqual(logged('delayed'), Array(PEOPLE.length).fill('RUNNING>WAITING>COMPLETED'));
    assert.deepEqual(logged('digested').sort(), [
      ...Array(DIGESTED - 1).fill('RUNNING>DIGESTED'),
      'RUNNING>WAITING>COMPLETED',
    ]);
    t.diagnostic('killed with every run waiting; all resumed once each');
  });
});
