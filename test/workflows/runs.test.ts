// #52 (docs/workflows.md "Runs"): triggers and runs over HTTP on one Herald (SQLite, a
// manual clock, the engine turned by hand): refused recipients, a topic's runs, Idempotency-Key,
// bad input answered 400 with nothing stored, the run's view and list, cancel, a version change
// during a run, and delays and digests falling due as the clock moves.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { manualClock } from '../../src/clock.ts';
import { engineTurn } from '../../src/workflows/engine.ts';
import type { WorkflowStep } from '../../src/workflows/model.ts';
import { notificationsApp } from '../notifications/fixtures.ts';

type T = Awaited<ReturnType<typeof notificationsApp>>;
type Headers = Record<string, string>;

const MINUTE = 60_000;
const inapp = (body: string, extra: object = {}): WorkflowStep => ({
  type: 'send',
  channel: 'inapp',
  content: { title: 'Hi', body },
  ...extra,
});

describe('workflow runs over HTTP', () => {
  let t: T;
  let settle: () => Promise<void>;
  // The engine's own clock, moved to make delays and digests fall due: the app's stays, so its
  // tokens stay valid.
  const engineClock = manualClock();
  before(async () => {
    t = await notificationsApp();
    engineClock.set(t.clock.now());
    const turn = engineTurn({
      runs: t.deps.store.workflowRuns,
      workflows: t.deps.store.workflows,
      clock: engineClock,
      wakeup: { notify() {} },
      chunk: 100,
    });
    settle = async () => {
      while (await turn());
    };
    await t.deps.store.recipients.put(
      'default',
      ['u1', 'u2', 'u3'].map((id) => ({ id, profile: {} })),
      t.clock.now(),
    );
  });
  after(() => t.close());

  const call = async (
    headers: Headers,
    method: string,
    url: string,
    payload?: unknown,
    extra: Headers = {},
  ) => {
    const answer = await t.app.inject({
      method: method as 'GET',
      url,
      headers: { ...headers, ...extra },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    return { status: answer.statusCode, body: answer.body ? answer.json() : undefined, answer };
  };
  const problem = (r: { status: number; answer: { headers: Record<string, unknown> } }, status: number) => {
    assert.equal(r.status, status);
    assert.match(String(r.answer.headers['content-type']), /application\/problem\+json/);
  };
  const define = (key: string, steps: WorkflowStep[]) =>
    t.deps.store.workflows.put('default', key, { name: null, category: null, steps }, t.clock.now());
  const run = async (id: string) => (await call(t.admin, 'GET', `/workflow-runs/${id}`)).body;

  it('starts a run per known recipient, refuses unknown ones one by one, and answers 400/404 storing nothing', async () => {
    await define('welcome', [
      inapp('welcome'),
      { type: 'delay', for: 'PT10M' },
      inapp('again', { if: 'not_read' }),
    ]);
    const made = await call(t.sender, 'POST', '/workflows/welcome/trigger', {
      recipients: ['u1', 'ghost', 'u2', 'u1'],
      variables: { name: 'Ada' },
      priority: 'HIGH',
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.deepEqual(
      made.body.runs.map((r: { recipientId: string }) => r.recipientId),
      ['u1', 'u2'],
    );
    assert.deepEqual(made.body.refused, [{ recipientId: 'ghost', code: 'RECIPIENT_NOT_FOUND' }]);
    const [first] = made.body.runs as Array<{ runId: string }>;
    const view = await run(first?.runId as string);
    assert.equal(view.status, 'RUNNING');
    assert.equal(view.workflow, 'welcome');
    assert.equal(view.version, 1);
    assert.equal(view.priority, 'HIGH');
    assert.equal(view.triggerId, made.body.triggerId);
    assert.deepEqual(
      view.steps.map((s: { type: string; status: string }) => `${s.type}:${s.status}`),
      ['send:PENDING', 'delay:PENDING', 'send:PENDING'],
    );

    const before = (await call(t.admin, 'GET', '/workflow-runs?limit=100')).body.items.length;
    problem(await call(t.sender, 'POST', '/workflows/nope/trigger', { recipients: ['u1'] }), 404);
    problem(await call(t.sender, 'POST', '/workflows/welcome/trigger', { topic: 'no-such-topic' }), 404);
    const both = await call(t.sender, 'POST', '/workflows/welcome/trigger', {
      recipients: ['u1'],
      topic: 'x',
    });
    problem(both, 400);
    assert.equal(both.body.errors[0].path, 'body/recipients');
    problem(await call(t.sender, 'POST', '/workflows/welcome/trigger', {}), 400);
    const many = Array.from({ length: 1001 }, (_, i) => `r${i}`);
    problem(await call(t.sender, 'POST', '/workflows/welcome/trigger', { recipients: many }), 400);
    problem(
      await call(t.sender, 'POST', '/workflows/welcome/trigger', { recipients: ['u1'], priority: 'URGENT' }),
      400,
    );
    problem(
      await call(t.sender, 'POST', '/workflows/welcome/trigger', {
        recipients: ['u1'],
        locale: 'not a locale',
      }),
      400,
    );
    problem(
      await call(t.sender, 'POST', '/workflows/welcome/trigger', { recipients: ['u1'], extra: 1 }),
      400,
    );
    problem(await call(t.viewer, 'POST', '/workflows/welcome/trigger', { recipients: ['u1'] }), 403);
    assert.equal((await call(t.admin, 'GET', '/workflow-runs?limit=100')).body.items.length, before);

    // The engine: the first send is made, then the run waits in its delay, due 10 minutes on.
    await settle();
    const waiting = await run(first?.runId as string);
    assert.equal(waiting.status, 'WAITING');
    assert.equal(waiting.steps[0].status, 'DONE');
    assert.ok(waiting.steps[0].notificationId);
    assert.equal(waiting.steps[1].status, 'WAITING');
    assert.equal(Date.parse(waiting.steps[1].until) - Date.parse(waiting.steps[1].at), 10 * MINUTE);
    const sent = await call(t.admin, 'GET', `/notifications/${waiting.steps[0].notificationId}`);
    assert.equal(sent.body.priority, 'HIGH');
    assert.deepEqual(sent.body.recipient, { id: 'u1' });

    // A new version meanwhile: the waiting run keeps the version it started with.
    await define('welcome', [inapp('v2 only')]);
    engineClock.advance(10 * MINUTE);
    await settle();
    const done = await run(first?.runId as string);
    assert.equal(done.status, 'COMPLETED');
    assert.equal(done.version, 1);
    assert.deepEqual(
      done.steps.map((s: { type: string; status: string }) => `${s.type}:${s.status}`),
      ['send:DONE', 'delay:DONE', 'send:DONE'],
    );
    const later = await call(t.sender, 'POST', '/workflows/welcome/trigger', { recipients: ['u3'] });
    assert.equal((await run(later.body.runs[0].runId)).version, 2);
  });

  it('replays an Idempotency-Key with the first answer and refuses another body with it', async () => {
    await define('once', [inapp('x')]);
    const key = { 'idempotency-key': 'order-17' };
    const first = await call(t.sender, 'POST', '/workflows/once/trigger', { recipients: ['u1'] }, key);
    assert.equal(first.status, 201);
    const again = await call(t.sender, 'POST', '/workflows/once/trigger', { recipients: ['u1'] }, key);
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, first.body);
    problem(await call(t.sender, 'POST', '/workflows/once/trigger', { recipients: ['u2'] }, key), 409);
    problem(
      await call(
        t.sender,
        'POST',
        '/workflows/once/trigger',
        { recipients: ['u2'] },
        { 'idempotency-key': 'é' },
      ),
      400,
    );
    const runs = await call(t.admin, 'GET', `/workflow-runs?triggerId=${first.body.triggerId}`);
    assert.equal(runs.body.items.length, 1);
    // Another tenant's key is its own.
    const other = await call(t.other, 'POST', '/workflows/once/trigger', { recipients: ['u1'] }, key);
    problem(other, 404);
  });

  it('gathers later runs into one digest and sends it once the window closes', async () => {
    await define('comments', [
      { type: 'digest', for: 'PT1M', key: 'post' },
      inapp('{{ digest.count }} comments'),
    ]);
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      const made = await call(t.sender, 'POST', '/workflows/comments/trigger', {
        recipients: ['u2'],
        variables: { post: 'p1', n },
      });
      ids.push(made.body.runs[0].runId);
      await settle();
    }
    const statuses = async () => Promise.all(ids.map(async (id) => (await run(id)).status));
    assert.deepEqual(await statuses(), ['WAITING', 'DIGESTED', 'DIGESTED']);
    engineClock.advance(MINUTE);
    await settle();
    assert.deepEqual(await statuses(), ['COMPLETED', 'DIGESTED', 'DIGESTED']);
    const owner = await run(ids[0] as string);
    const sent = await t.deps.store.notifications.get('default', owner.steps[1].notificationId);
    assert.deepEqual((sent?.record.variables as { digest?: unknown } | undefined)?.digest, {
      count: 3,
      items: [
        { post: 'p1', n: 1 },
        { post: 'p1', n: 2 },
        { post: 'p1', n: 3 },
      ],
    });
  });

  it('lists runs by filter in cursor pages, cancels a live run once, and hides other tenants', async () => {
    await define('slow', [{ type: 'delay', for: 'PT1H' }, inapp('x')]);
    const made = await call(t.sender, 'POST', '/workflows/slow/trigger', { recipients: ['u1', 'u2', 'u3'] });
    await settle();
    const page1 = await call(t.admin, 'GET', '/workflow-runs?workflow=slow&limit=2');
    assert.equal(page1.status, 200);
    assert.equal(page1.body.items.length, 2);
    const page2 = await call(
      t.admin,
      'GET',
      `/workflow-runs?workflow=slow&limit=2&cursor=${page1.body.nextCursor}`,
    );
    assert.equal(page2.body.items.length, 1);
    assert.equal(page2.body.nextCursor, null);
    const mine = await call(t.admin, 'GET', '/workflow-runs?workflow=slow&recipientId=u2&status=WAITING');
    assert.deepEqual(
      mine.body.items.map((r: { recipientId: string }) => r.recipientId),
      ['u2'],
    );
    problem(await call(t.admin, 'GET', '/workflow-runs?status=SLEEPING'), 400);
    problem(await call(t.admin, 'GET', '/workflow-runs?cursor=bm9wZQ'), 400);

    const runId = made.body.runs[0].runId as string;
    problem(await call(t.other, 'GET', `/workflow-runs/${runId}`), 404);
    problem(await call(t.other, 'POST', `/workflow-runs/${runId}/cancel`), 404);
    assert.equal((await call(t.other, 'GET', '/workflow-runs')).body.items.length, 0);
    const cancelled = await call(t.sender, 'POST', `/workflow-runs/${runId}/cancel`);
    assert.equal(cancelled.status, 200);
    assert.equal(cancelled.body.status, 'CANCELLED');
    problem(await call(t.sender, 'POST', `/workflow-runs/${runId}/cancel`), 409);
    engineClock.advance(61 * MINUTE);
    await settle();
    assert.equal((await run(runId)).status, 'CANCELLED');
    assert.equal((await run(made.body.runs[1].runId)).status, 'COMPLETED');
  });

  it('starts a run for every subscriber of a topic as the engine fans it out', async () => {
    await t.deps.store.topics.put('default', 'team', null, t.clock.now());
    await t.deps.store.topics.subscribe('default', 'team', ['u1', 'u2', 'u3'], t.clock.now());
    await define('team-note', [inapp('x')]);
    const made = await call(t.sender, 'POST', '/workflows/team-note/trigger', { topic: 'team' });
    assert.equal(made.status, 201);
    assert.deepEqual(Object.keys(made.body), ['triggerId']);
    await settle();
    const runs = await call(t.admin, 'GET', `/workflow-runs?triggerId=${made.body.triggerId}`);
    assert.deepEqual(
      runs.body.items
        .map((r: { recipientId: string; status: string }) => `${r.recipientId}:${r.status}`)
        .sort(),
      ['u1:COMPLETED', 'u2:COMPLETED', 'u3:COMPLETED'],
    );
  });
});
