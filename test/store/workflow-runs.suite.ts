import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/port/index.ts';
import { everyPriority } from '../../src/store/port/queue.ts';
import type { LoggedStatus } from '../../src/store/port/status-log.ts';
import {
  type Definitions,
  definitionKey,
  type NewTrigger,
  type RunRecord,
} from '../../src/store/port/workflow-runs.ts';
import { firstSteps } from '../../src/workflows/advance.ts';
import type { WorkflowRecord, WorkflowStep } from '../../src/workflows/model.ts';
import { newTrigger, workflowRecord } from '../helpers/workflow-fixtures.ts';
import { ALL, cycle, T0 } from './queue-fixtures.ts';
import { freshStores } from './suites.ts';

const S = 1000;
const send = (text: string, extra: object = {}): WorkflowStep => ({
  type: 'send',
  channel: 'inapp',
  content: { title: 'Hi', body: text },
  ...extra,
});

const workflow = (key: string, steps: WorkflowStep[], version = 1): WorkflowRecord =>
  workflowRecord(key, steps, version, T0);

const definitionsOf = (...records: WorkflowRecord[]): Definitions =>
  new Map(records.map((w) => [definitionKey('t1', w.key, w.version), w]));

let seq = 0;
const trigger = (w: WorkflowRecord, over: Partial<NewTrigger> = {}): NewTrigger =>
  newTrigger(w, 't1', { id: `tr-${++seq}`, createdAt: T0, ...over });

async function start(store: Store, w: WorkflowRecord, recipients: string[], over: Partial<NewTrigger> = {}) {
  const t = trigger(w, over);
  const runs = recipients.map((recipientId) => ({ id: `run-${++seq}`, recipientId }));
  assert.equal(await store.workflowRuns.trigger(t, runs, 0), undefined);
  return runs.map((r) => r.id);
}

const get = async (store: Store, id: string) => (await store.workflowRuns.get('t1', id)) as RunRecord;

/** Advances until no run is due at `now` (a few steps of `chunk`). */
async function settle(store: Store, now: number, defs: Definitions, chunk = 50) {
  for (let i = 0; i < 100; i++) {
    const r = await store.workflowRuns.advance(now, chunk, defs);
    if (r.advanced === 0) return;
  }
  throw new Error('runs kept advancing');
}

export function workflowRunsSuite(name: string, open: () => Promise<Store>): void {
  describe(`workflow runs store (${name})`, () => {
    const fresh = freshStores(open);

    it('runs sends, delays, conditions, digests and throttles each in its step transaction', async () => {
      const store = await fresh();
      await store.recipients.put(
        't1',
        [
          { id: 'u1', profile: {} },
          { id: 'u2', profile: {} },
        ],
        T0,
      );

      // send, delay, send if not_delivered (holds: nothing delivered), send if failed (does not hold).
      const chain = workflow('chain', [
        send('first'),
        { type: 'delay', for: 'PT10S' },
        send('again', { if: 'not_delivered' }),
        send('oops', { if: 'failed' }),
      ]);
      const digest = workflow('digest', [
        { type: 'digest', for: 'PT1M', key: 'project' },
        send('{{ digest.count }}'),
      ]);
      const throttle = workflow('throttle', [{ type: 'throttle', limit: 2, for: 'PT1M' }, send('x')]);
      const defs = definitionsOf(chain, digest, throttle);

      const [c1] = await start(store, chain, ['u1']);
      await settle(store, T0, defs);
      let run = await get(store, c1 as string);
      assert.equal(run.status, 'WAITING');
      assert.equal(run.stepIndex, 1);
      assert.equal(run.dueAt, T0 + 10 * S);
      assert.deepEqual(run.steps[1], { status: 'WAITING', at: T0, until: T0 + 10 * S });
      const first = run.steps[0]?.notificationId as string;
      const made = await store.notifications.get('t1', first);
      assert.deepEqual(made?.record.recipient, { id: 'u1' });
      assert.equal(await store.workflowRuns.nextDue(), T0 + 10 * S);

      // Not due yet: nothing moves, and the delay keeps its due time.
      await settle(store, T0 + 5 * S, defs);
      assert.equal((await get(store, c1 as string)).status, 'WAITING');
      await settle(store, T0 + 10 * S, defs);
      run = await get(store, c1 as string);
      assert.equal(run.status, 'COMPLETED');
      assert.equal(run.dueAt, null);
      assert.deepEqual(
        run.steps.map((s) => s.status),
        ['DONE', 'DONE', 'DONE', 'SKIPPED'],
      );
      assert.ok(run.steps[2]?.notificationId);
      assert.equal(await store.workflowRuns.nextDue(), null);

      // Digest: three runs of u1 for project a, one for project b. The first of each waits; the
      // later one joins and ends DIGESTED; after the window the first sends with the digest.
      const [d1, d2, d3] = await start(store, digest, ['u1'], { variables: '{"project":"a","n":1}' }).then(
        async (a) => [
          ...a,
          ...(await start(store, digest, ['u1'], { variables: '{"project":"a","n":2}' })),
          ...(await start(store, digest, ['u1'], { variables: '{"project":"b","n":3}' })),
        ],
      );
      await settle(store, T0, defs);
      assert.equal((await get(store, d1 as string)).status, 'WAITING');
      assert.equal((await get(store, d2 as string)).status, 'DIGESTED');
      assert.equal((await get(store, d3 as string)).status, 'WAITING');
      await settle(store, T0 + 60 * S, defs);
      const closed = await get(store, d1 as string);
      assert.equal(closed.status, 'COMPLETED');
      assert.deepEqual(closed.digest, {
        count: 2,
        items: [
          { project: 'a', n: 1 },
          { project: 'a', n: 2 },
        ],
      });
      const digestSend = await store.notifications.get('t1', closed.steps[1]?.notificationId as string);
      assert.deepEqual(
        (digestSend?.record.variables as { digest?: unknown } | undefined)?.digest,
        closed.digest,
      );
      // A run reaching the digest after it closed opens a new one.
      const [d4] = await start(store, digest, ['u1'], {
        variables: '{"project":"a","n":4}',
        createdAt: T0 + 61 * S,
      });
      await settle(store, T0 + 61 * S, defs);
      assert.equal((await get(store, d4 as string)).status, 'WAITING');

      // Throttle: two pass in a minute, the third ends THROTTLED; a minute later one passes again.
      const t = await start(store, throttle, ['u2', 'u2', 'u2']);
      await settle(store, T0, defs);
      assert.deepEqual(await Promise.all(t.map(async (id) => (await get(store, id)).status)), [
        'COMPLETED',
        'COMPLETED',
        'THROTTLED',
      ]);
      const [t4] = await start(store, throttle, ['u2'], { createdAt: T0 + 61 * S });
      await settle(store, T0 + 61 * S, defs);
      assert.equal((await get(store, t4 as string)).status, 'COMPLETED');
    });

    it('takes due runs in priority order, a bounded chunk per step, and keeps each run on its version', async () => {
      const store = await fresh();
      const v1 = workflow('w', [send('v1')], 1);
      const v2 = workflow('w', [send('v2'), send('v2 again')], 2);
      const defs = definitionsOf(v1, v2);
      const low = await start(store, v1, ['a', 'b', 'c'], { priority: 'LOW' });
      const [critical] = await start(store, v2, ['d'], { priority: 'CRITICAL' });
      const first = await store.workflowRuns.advance(T0, 2, defs);
      assert.equal(first.advanced, 2);
      assert.equal((await get(store, critical as string)).status, 'COMPLETED');
      assert.equal((await get(store, critical as string)).steps.length, 2);
      await settle(store, T0, defs);
      for (const id of low) {
        const run = await get(store, id);
        assert.equal(run.version, 1);
        assert.equal(run.steps.length, 1);
        assert.equal(run.status, 'COMPLETED');
      }
      // A run whose version is not loaded is left due and named, for the engine to load.
      const v3 = workflow('w', [send('v3')], 3);
      const [later] = await start(store, v3, ['e']);
      const missing = await store.workflowRuns.advance(T0, 10, defs);
      assert.deepEqual(missing.missing, [{ tenant: 't1', workflowKey: 'w', version: 3 }]);
      assert.equal((await get(store, later as string)).status, 'RUNNING');
      // One that is gone ends FAILED.
      await store.workflowRuns.advance(T0, 10, new Map([[definitionKey('t1', 'w', 3), null]]));
      assert.equal((await get(store, later as string)).status, 'FAILED');
    });

    it("takes tenants in turns within a priority: one tenant's backlog holds another's run one step at most", async () => {
      const store = await fresh();
      const w = workflow('w', [send('x')]);
      const defs: Definitions = new Map(['busy', 'calm'].map((t) => [definitionKey(t, 'w', 1), w]));
      const users = Array.from({ length: 30 }, (_, i) => `u${i}`);
      const many = await start(store, w, users, { tenant: 'busy' });
      const [lone] = await start(store, w, ['v'], { tenant: 'calm', createdAt: T0 + 1 });
      const status = async (tenant: string, id: string) => (await store.workflowRuns.get(tenant, id))?.status;
      const done = async () => {
        let n = 0;
        for (const id of many) if ((await status('busy', id)) === 'COMPLETED') n++;
        return n;
      };

      // 30 of busy's runs fell due before calm's one: calm's is in the first chunk all the same,
      // and the rest of the chunk is busy's (each run taken once).
      const first = await store.workflowRuns.advance(T0 + 1, 10, defs);
      assert.equal(first.advanced, 10);
      assert.equal(await status('calm', lone as string), 'COMPLETED');
      assert.equal(await done(), 9);
      // Alone again, busy keeps the whole step's pace.
      assert.equal((await store.workflowRuns.advance(T0 + 1, 10, defs)).advanced, 10);
      assert.equal(await done(), 19);
      await settle(store, T0 + 1, defs, 10);
      assert.equal(await done(), 30);
    });

    it('replays an Idempotency-Key, lists with filters and cancels once', async () => {
      const store = await fresh();
      const w = workflow('w', [{ type: 'delay', for: 'PT1H' }, send('x')]);
      const t = trigger(w, { idempotencyKey: 'k1', requestHash: 'h1', answer: '{"triggerId":"a"}' });
      assert.equal(await store.workflowRuns.trigger(t, [{ id: 'r1', recipientId: 'u1' }], 0), undefined);
      const again = trigger(w, { idempotencyKey: 'k1', requestHash: 'h2', answer: '{"triggerId":"b"}' });
      assert.deepEqual(await store.workflowRuns.trigger(again, [{ id: 'r2', recipientId: 'u1' }], 0), {
        answer: '{"triggerId":"a"}',
        requestHash: 'h1',
      });
      assert.equal(await store.workflowRuns.get('t1', 'r2'), null);
      assert.deepEqual(await store.workflowRuns.findTrigger('t1', 'k1', 0), {
        answer: '{"triggerId":"a"}',
        requestHash: 'h1',
      });
      // Expired: the key is released for a new trigger.
      assert.equal(await store.workflowRuns.findTrigger('t1', 'k1', T0 + 1), null);
      assert.equal(
        await store.workflowRuns.trigger(again, [{ id: 'r2', recipientId: 'u2' }], T0 + 1),
        undefined,
      );

      const all = await store.workflowRuns.list('t1', {}, { limit: 10 });
      assert.deepEqual(
        all.map((r) => r.id),
        ['r2', 'r1'],
      );
      const mine = await store.workflowRuns.list('t1', { recipientId: 'u1' }, { limit: 10 });
      assert.deepEqual(
        mine.map((r) => r.id),
        ['r1'],
      );
      assert.deepEqual(
        (await store.workflowRuns.list('t1', { triggerId: again.id }, { limit: 10 })).map((r) => r.id),
        ['r2'],
      );
      const page = await store.workflowRuns.list('t1', {}, { limit: 1, before: all[0]?.seq });
      assert.deepEqual(
        page.map((r) => r.id),
        ['r1'],
      );
      assert.equal((await store.workflowRuns.list('t2', {}, { limit: 10 })).length, 0);

      await settle(store, T0, definitionsOf(w));
      const cancelled = await store.workflowRuns.cancel('t1', 'r1', T0 + 1);
      assert.equal((cancelled as RunRecord).status, 'CANCELLED');
      assert.equal((cancelled as RunRecord).dueAt, null);
      assert.equal(await store.workflowRuns.cancel('t1', 'r1', T0 + 2), 'ended');
      assert.equal(await store.workflowRuns.cancel('t2', 'r2', T0 + 2), null);
      assert.deepEqual((await store.workflowRuns.counts()).waitingByWorkflow, { w: 1 });
    });

    it("lists a recipient's runs newest first, exactly, however many of them the recipients' index holds yet (decision 0064)", async () => {
      const store = await fresh();
      const runs = store.workflowRuns;
      const w = workflow('w', [{ type: 'delay', for: 'PT1H' }, send('x')]);
      const other = workflow('other', [send('y')]);
      const start = firstSteps(w, null, T0);
      const made: string[] = [];
      const group = async (recipients: string[], wf = w, tenant = 't1') => {
        const t = trigger(wf, { tenant });
        const ids = recipients.map((recipientId) => ({ id: `run-${++seq}`, recipientId }));
        await runs.triggerMany([{ trigger: t, runs: ids, start: wf === w ? start : null }], 0);
        made.push(...ids.filter((r) => r.recipientId === 'u1' && tenant === 't1').map((r) => r.id));
      };
      // Every page of u1's runs, `limit` at a time, and with each filter, against the runs made.
      const check = async () => {
        const newest = [...made].reverse();
        assert.deepEqual(
          (await runs.list('t1', { recipientId: 'u1' }, { limit: 100 })).map((r) => r.id),
          newest,
        );
        for (const limit of [1, 2, 3]) {
          const read: string[] = [];
          let before: number | undefined;
          for (;;) {
            const page = await runs.list('t1', { recipientId: 'u1' }, { limit, before });
            read.push(...page.map((r) => r.id));
            if (page.length < limit) break;
            before = page.at(-1)?.seq;
          }
          assert.deepEqual(read, newest, `pages of ${limit}`);
        }
        const waiting = await runs.list(
          't1',
          { recipientId: 'u1', status: 'WAITING', workflow: 'w' },
          { limit: 100 },
        );
        const ofW = await runs.list('t1', { workflow: 'w' }, { limit: 100 });
        const u1OfW = ofW.filter((r) => r.recipientId === 'u1').map((r) => r.id);
        assert.deepEqual(
          waiting.map((r) => r.id),
          u1OfW,
        );
        assert.deepEqual(
          (
            await runs.list('t1', { recipientId: 'u1', workflow: 'other', status: 'RUNNING' }, { limit: 1 })
          ).map((r) => r.id),
          (await runs.list('t1', { workflow: 'other' }, { limit: 100 }))
            .filter((r) => r.recipientId === 'u1')
            .slice(0, 1)
            .map((r) => r.id),
        );
        assert.deepEqual(await runs.list('t1', { recipientId: 'nobody' }, { limit: 10 }), []);
      };

      await group(['u1', 'u2', 'u1']);
      await group(['u1'], w, 't2');
      await group(['u2', 'u1'], other);
      await check();
      // Entered in bulk, oldest first: a few, then the rest once none came lately.
      const first = await runs.indexRecipients(2, 0);
      assert.ok(first === 2 || first === 0, `entered ${first}`);
      await check();
      await group(['u1', 'u3', 'u1']);
      await check();
      assert.equal(
        await runs.indexRecipients(100, T0 - 1),
        0,
        'the newest run was made at T0: not quiet yet',
      );
      await check();
      const rest = await runs.indexRecipients(100, T0);
      assert.ok(rest === 0 || first + rest === 9, `entered ${first} then ${rest} of 9`);
      await check();
      assert.equal(await runs.indexRecipients(100, T0 + 1), 0);
      assert.deepEqual(
        (await runs.list('t2', { recipientId: 'u1' }, { limit: 10 })).map((r) => r.recipientId),
        ['u1'],
      );
    });

    it("logs each run's status change in the status log, in the transaction that makes it (decision 0035)", async () => {
      const store = await fresh();
      const log = store.statusLog;
      for (const tenant of ['t1', 't2']) await store.recipients.put(tenant, [{ id: 'u1', profile: {} }], T0);
      const from = await log.head();
      const w = workflow('w', [send('first'), { type: 'delay', for: 'PT10S' }]);
      const [done, cancelled] = await start(store, w, ['u1', 'u1']);
      const other = 'o1';
      await store.workflowRuns.trigger(trigger(w, { tenant: 't2' }), [{ id: other, recipientId: 'u1' }], 0);
      const defs = new Map([...definitionsOf(w), [definitionKey('t2', 'w', 1), w]]);
      await settle(store, T0, defs);
      // The notification the first send made, claimed: its event sits in the log beside the runs'.
      const inapp = { ...ALL, perChannel: everyPriority({ inapp: 100 }) };
      const claimed = (await cycle(store, { now: T0 + 1, claim: inapp })).claimed;
      assert.equal(claimed.length, 3);
      await store.workflowRuns.cancel('t1', cancelled as string, T0 + 2);
      await settle(store, T0 + 10 * S, defs);

      const rows = (await log.read(from, { limit: 100 })).rows;
      const of = (id: string) =>
        rows.filter((r) => r.run !== null && r.notificationId === id).map((r) => `${r.previous}>${r.type}`);
      assert.deepEqual(of(done as string), ['null>RUNNING', 'RUNNING>WAITING', 'WAITING>COMPLETED']);
      assert.deepEqual(of(cancelled as string), ['null>RUNNING', 'RUNNING>WAITING', 'WAITING>CANCELLED']);
      assert.deepEqual(of(other), ['null>RUNNING', 'RUNNING>WAITING', 'WAITING>COMPLETED']);
      const first = rows.find((r) => r.notificationId === done);
      assert.deepEqual(first?.run, { workflow: 'w', version: 1, recipientId: 'u1' });
      assert.equal(first?.tenant, 't1');
      assert.equal(first?.at, T0);
      // The notifications' events keep their own previous status, not a run's.
      const sent = rows.filter((r) => r.run === null);
      assert.deepEqual(
        sent.map((r) => `${r.previous}>${r.type}`),
        ['null>PROCESSING', 'null>PROCESSING', 'null>PROCESSING'],
      );
      const cursors = rows.map((r) => r.cursor);
      assert.deepEqual([...cursors].sort(log.compare), cursors, 'in log order');

      // Filters: a run's change is asked for by RUN_CHANGE, never by its status; tenants filter runs too.
      const runsOnly = (await log.read(from, { limit: 100, types: ['workflow.run'] })).rows;
      assert.equal(runsOnly.length, 9);
      assert.ok(runsOnly.every((r) => r.run !== null));
      const cancels = (await log.read(from, { limit: 100, types: ['CANCELLED', 'PROCESSING'] })).rows;
      assert.ok(cancels.every((r) => r.run === null && r.type === 'PROCESSING'));
      const t2 = (await log.read(from, { limit: 100, tenants: ['t2'] })).rows;
      assert.ok(t2.every((r) => r.tenant === 't2'));
      assert.deepEqual(
        t2.filter((r) => r.run !== null).map((r) => `${r.notificationId}:${r.type}`),
        ['o1:RUNNING', 'o1:WAITING', 'o1:COMPLETED'],
      );
      assert.equal(t2.length, 4, "its runs' changes and its notification's PROCESSING");

      // A step that fails rolls back the whole turn: the runs it moved and their log rows with it.
      const head = await log.head();
      const urgent = workflow('urgent', [{ type: 'delay', for: 'PT1H' }]);
      const broken = workflow('broken', [
        { type: 'send', channel: 'inapp', content: { title: 'x', body: 1n as unknown as string } },
      ]);
      const [moved] = await start(store, urgent, ['u1'], { priority: 'HIGH' });
      await start(store, broken, ['u1']);
      const logged = await log.head();
      await assert.rejects(store.workflowRuns.advance(T0 + 20 * S, 10, definitionsOf(urgent, broken)));
      assert.equal((await get(store, moved as string)).status, 'RUNNING');
      assert.equal(await log.head(), logged, 'no log row of the rolled-back turn');
      assert.equal((await log.read(head, { limit: 10 })).rows.length, 2, 'the two RUNNING rows only');
    });

    it('stores runs whose trigger took their first steps as the engine leaves them, logged RUNNING then WAITING (decision 0053)', async () => {
      const store = await fresh();
      await store.recipients.put('t1', [{ id: 'u1', profile: {} }], T0);
      const w = workflow('w', [{ type: 'delay', for: 'PT10S' }, send('later')]);
      // One run stepped into its delay by the engine, one stored there by its trigger.
      const [stepped] = await start(store, w, ['u1']);
      await settle(store, T0, definitionsOf(w));
      const from = await store.statusLog.head();
      const taken = { id: `run-${++seq}`, recipientId: 'u1' };
      const begun = firstSteps(w, null, T0);
      assert.equal(begun?.status, 'WAITING');
      assert.deepEqual(
        await store.workflowRuns.triggerMany([{ trigger: trigger(w), runs: [taken], start: begun }], 0),
        [undefined],
      );
      const byEngine = await get(store, stepped as string);
      const byTrigger = await get(store, taken.id);
      for (const field of ['status', 'stepIndex', 'steps', 'dueAt'] as const)
        assert.deepEqual(byTrigger[field], byEngine[field], field);
      const log = store.statusLog;
      const rows = (await log.read(from, { limit: 10 })).rows;
      assert.deepEqual(
        rows.map((r) => `${r.notificationId}:${r.previous}>${r.type}`),
        [`${taken.id}:null>RUNNING`, `${taken.id}:RUNNING>WAITING`],
      );
      // One row stands for both (decision 0060): the WAITING is the log's head, the RUNNING's cursor
      // comes just before it, and a reader that stops between the two reads on from the second.
      const [running, waiting] = rows as [LoggedStatus, LoggedStatus];
      assert.equal(waiting.cursor, await log.head());
      assert.ok(log.isCursor(running.cursor), 'a Last-Event-ID a client may send back');
      assert.ok(log.compare(from, running.cursor) < 0 && log.compare(running.cursor, waiting.cursor) < 0);
      assert.notEqual(running.cursor, waiting.cursor);
      const first = await log.read(from, { limit: 1 });
      assert.deepEqual(
        first.rows.map((r) => r.type),
        ['RUNNING'],
      );
      assert.equal(first.readTo, running.cursor);
      const rest = await log.read(first.readTo, { limit: 10 });
      assert.deepEqual(
        rest.rows.map((r) => `${r.cursor}:${r.previous}>${r.type}`),
        [`${waiting.cursor}:RUNNING>WAITING`],
      );
      assert.deepEqual((await log.read(waiting.cursor, { limit: 10 })).rows, []);
      const filtered = await log.read(running.cursor, {
        limit: 10,
        types: ['workflow.run'],
        tenants: ['t1'],
      });
      assert.deepEqual(
        filtered.rows.map((r) => r.type),
        ['WAITING'],
      );
    });

    /** A fresh store whose topic `news` of tenant t1 has `ids` as subscribers. */
    const withTopic = async (ids: string[]) => {
      const store = await fresh();
      await store.recipients.put(
        't1',
        ids.map((id) => ({ id, profile: {} })),
        T0,
      );
      await store.topics.put('t1', 'news', null, T0);
      await store.topics.subscribe('t1', 'news', ids, T0);
      return store;
    };

    it("makes a topic trigger's runs in chunks, once per subscriber", async () => {
      const ids = ['m1', 'm2', 'm3', 'm4', 'm5'];
      const store = await withTopic(ids);
      const w = workflow('w', [send('x')]);
      await store.workflowRuns.trigger(trigger(w, { id: 'topic-1', topic: 'news' }), [], 0);
      assert.equal(await store.workflowRuns.hasFanOut(), true);
      const steps = [];
      for (
        let step = await store.workflowRuns.fanOut(T0, 2, definitionsOf(w));
        step;
        step = await store.workflowRuns.fanOut(T0, 2, definitionsOf(w))
      ) {
        steps.push(`${step.made} ${step.started}`);
      }
      assert.deepEqual(steps, ['2 RUNNING', '2 RUNNING', '1 RUNNING'], "a first send is the engine's");
      assert.equal(await store.workflowRuns.hasFanOut(), false);
      const runs = await store.workflowRuns.list('t1', { triggerId: 'topic-1' }, { limit: 10 });
      assert.deepEqual(runs.map((r) => r.recipientId).sort(), ids);
    });

    it("takes a topic trigger's runs into their first delay in the chunk's transaction, once its version is loaded (decision 0060)", async () => {
      const ids = ['m1', 'm2', 'm3'];
      const store = await withTopic(ids);
      const w = workflow('w', [{ type: 'delay', for: 'PT10S' }, send('later')]);
      await store.workflowRuns.trigger(trigger(w, { id: 'topic-2', topic: 'news' }), [], 0);
      const from = await store.statusLog.head();
      // The engine has not loaded the version: nothing made, the version named.
      const unknown = await store.workflowRuns.fanOut(T0, 10, new Map());
      assert.deepEqual(unknown && { made: unknown.made, missing: unknown.missing }, {
        made: 0,
        missing: { tenant: 't1', workflowKey: 'w', version: w.version },
      });
      assert.equal(await store.workflowRuns.hasFanOut(), true);
      const made = await store.workflowRuns.fanOut(T0, 10, definitionsOf(w));
      assert.deepEqual(made && { made: made.made, started: made.started }, { made: 3, started: 'WAITING' });
      const runs = await store.workflowRuns.list('t1', { triggerId: 'topic-2' }, { limit: 10 });
      assert.deepEqual(runs.map((r) => r.recipientId).sort(), ids);
      for (const run of runs) {
        assert.equal(run.status, 'WAITING');
        assert.equal(run.dueAt, T0 + 10 * S);
        assert.deepEqual(run.steps, [
          { status: 'WAITING', at: T0, until: T0 + 10 * S },
          { status: 'PENDING' },
        ]);
      }
      // Nothing due before the delay ends; each run's changes read RUNNING then WAITING.
      assert.equal((await store.workflowRuns.advance(T0 + S, 10, definitionsOf(w))).advanced, 0);
      const changes = (await store.statusLog.read(from, { limit: 10 })).rows;
      assert.deepEqual(
        changes.map((r) => `${r.previous}>${r.type}`),
        ids.flatMap(() => ['null>RUNNING', 'RUNNING>WAITING']),
      );
    });
  });
}
