// #52 (decision 0035): a workflow run's status changes reach the status callbacks and the live
// stream as a notification's do, on SQLite and PostgreSQL: a real Herald (API and worker in one
// process), a real HTTPS receiver verifying every message with `standardwebhooks`, and streams
// read with `eventsource`. A callback without `events` gets RUNNING → WAITING → COMPLETED in
// order; one whose list lacks "workflow.run" gets none; a stream gets them as `workflow.run`
// events (not `status`), a narrowed one none, and a replay with Last-Event-ID what it missed. A run
// its trigger stored WAITING has one log row for its two changes (decision 0060): both are reported.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { type Herald, startHerald } from '../../src/main.ts';
import { apiCall } from '../helpers/api-call.ts';
import { tokenFor } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { type CallbackReceiver, startCallbackReceiver } from '../helpers/peers/callback-receiver.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';
import { openStream, type StreamClient } from '../streams/sse-client.ts';

interface Body {
  type: string;
  timestamp: string;
  data: Record<string, unknown> & { runId?: string; notificationId?: string };
}

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`workflow run changes in callbacks and the stream (${kind})`, () => {
    let herald: Herald;
    let receiver: CallbackReceiver;
    let admin: string;
    const clients: StreamClient[] = [];
    before(async () => {
      receiver = await startCallbackReceiver();
      const env: Record<string, string> =
        kind === 'postgres'
          ? { DATABASE_URL: await (await sharedPostgres()).createDatabase('herald_run_events') }
          : {};
      herald = await startHerald(
        testConfig({ ...env, HERALD_ROLES: 'auth,api,worker', HERALD_CALLBACK_ALLOWED_HOSTS: receiver.host }),
      );
      admin = await tokenFor(herald.deps, { role: 'admin' });
    });
    after(async () => {
      for (const client of clients) client.close();
      await herald.close();
      await receiver.close();
      if (kind === 'postgres') await stopSharedPostgres();
    });

    const call = (method: string, path: string, body?: object) =>
      apiCall(herald.apiUrl as string, admin, method, path, body);
    const open = (query = '', lastEventId?: string) => {
      const client = openStream(`${herald.apiUrl}/notifications/stream${query}`, admin, lastEventId);
      clients.push(client);
      return client;
    };
    const register = async (path: string, events?: string[]) => {
      const created = await call('POST', '/callbacks', { url: `${receiver.origin}${path}`, events });
      assert.equal(created.status, 201, JSON.stringify(created.json));
      return created.json as { secret: string; events: string[] };
    };
    /** What a path got, each body verified as a receiver would (Standard Webhooks). */
    const verified = (path: string, secret: string) => {
      const hook = new Webhook(secret);
      return receiver.at(path).map((r) => hook.verify(r.body, r.headers as Record<string, string>) as Body);
    };
    const steps = (changes: ReadonlyArray<Record<string, unknown>>) =>
      changes.map((c) => `${c.previousStatus}>${c.status}`);

    it("reports a run's RUNNING, WAITING and COMPLETED to callbacks in order and on the stream; a list without workflow.run gets none", async () => {
      const all = await register('/all');
      assert.ok(all.events.includes('workflow.run'), 'the default is every status and workflow.run');
      const runsOnly = await register('/runs', ['workflow.run']);
      const delivered = await register('/delivered', ['DELIVERED']);
      // A run status is not an entry of `events`: 400, nothing stored.
      for (const events of [['COMPLETED'], ['RUNNING'], ['workflow.run', 'WAITING']]) {
        const refused = await call('POST', '/callbacks', { url: `${receiver.origin}/x`, events });
        assert.equal(refused.status, 400, JSON.stringify(events));
      }
      assert.equal((await call('GET', '/callbacks')).json.items.length, 3);

      // A stream narrowed to a notification, which gets no run's change: one scheduled an hour
      // ahead, cancelled once the run has ended, so that its change comes after the run's.
      const email = await call('POST', '/notifications', {
        channel: 'email',
        recipient: { email: 'someone@example.com' },
        content: { subject: 'Hi', text: 'Hello' },
        scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
      });
      assert.equal(email.status, 201);
      const narrowed = open(`?notificationId=${email.json.notificationId}`);
      const wide = open();
      await Promise.all([narrowed.opened, wide.opened]);

      assert.equal((await call('PUT', '/recipients/u1', { email: 'u1@example.com' })).status, 201);
      const defined = await call('PUT', '/workflows/nudge', {
        steps: [
          { type: 'send', channel: 'inapp', content: { title: 'Hi', body: 'first' } },
          { type: 'delay', for: 'PT1S' },
        ],
      });
      assert.equal(defined.status, 201, JSON.stringify(defined.json));
      const triggered = await call('POST', '/workflows/nudge/trigger', { recipients: ['u1'] });
      assert.equal(triggered.status, 201, JSON.stringify(triggered.json));
      const runId = triggered.json.runs[0].runId as string;

      const runBodies = (path: string, secret: string) =>
        verified(path, secret).filter((b) => b.data.runId === runId);
      await eventually(
        () =>
          runBodies('/all', all.secret).length === 3 &&
          runBodies('/runs', runsOnly.secret).length === 3 &&
          receiver.at('/delivered').length >= 1 &&
          wide.runs.length === 3,
        30_000,
        "the run's three changes at both callbacks and on the stream, and its notification's DELIVERED",
      );
      for (const [path, secret] of [
        ['/all', all.secret],
        ['/runs', runsOnly.secret],
      ] as const) {
        const bodies = runBodies(path, secret);
        assert.deepEqual(steps(bodies.map((b) => b.data)), [
          'null>RUNNING',
          'RUNNING>WAITING',
          'WAITING>COMPLETED',
        ]);
        for (const b of bodies) {
          assert.equal(b.type, 'workflow.run');
          assert.equal(b.timestamp, b.data.at);
          assert.deepEqual(
            { ...b.data, status: undefined, previousStatus: undefined, at: undefined },
            {
              runId,
              workflow: 'nudge',
              version: 1,
              recipientId: 'u1',
              status: undefined,
              previousStatus: undefined,
              at: undefined,
            },
          );
        }
      }
      assert.ok(
        verified('/runs', runsOnly.secret).every((b) => b.type === 'workflow.run'),
        'workflow.run alone: no notification changes',
      );
      // The list without workflow.run: the run's in-app DELIVERED, no run change.
      const onlyDelivered = verified('/delivered', delivered.secret);
      assert.ok(
        onlyDelivered.every((b) => b.type === 'notification.status' && b.data.status === 'DELIVERED'),
      );

      // The stream: the run's changes as `workflow.run` events, in order; none as `status`.
      assert.deepEqual(steps(wide.runs.map((r) => r.change)), [
        'null>RUNNING',
        'RUNNING>WAITING',
        'WAITING>COMPLETED',
      ]);
      assert.ok(wide.runs.every((r) => r.change.runId === runId && r.change.workflow === 'nudge'));
      assert.ok(wide.received.every((r) => r.change.notificationId !== runId));
      assert.equal((await call('POST', `/notifications/${email.json.notificationId}/cancel`)).status, 200);
      await eventually(
        () => narrowed.received.some((r) => r.change.status === 'CANCELLED'),
        20_000,
        'the narrowed stream to see its notification cancelled',
      );
      assert.deepEqual(narrowed.runs, [], 'a narrowed stream gets no run change');

      // A client that left after the run's RUNNING: its replay gives the two it missed, once each.
      const [running] = wide.runs;
      const resumed = open('', running?.id);
      await eventually(() => resumed.runs.length >= 2, 20_000, 'the replayed run changes');
      assert.deepEqual(
        resumed.runs.map((r) => r.id),
        wide.runs.slice(1).map((r) => r.id),
      );
      assert.deepEqual(steps(resumed.runs.map((r) => r.change)), ['RUNNING>WAITING', 'WAITING>COMPLETED']);
    });

    it('reports a run stored WAITING by its trigger (one log row) as RUNNING then WAITING, and replays from between them', async () => {
      const hook = await register('/stored-waiting', ['workflow.run']);
      const wide = open();
      await wide.opened;
      assert.equal((await call('PUT', '/recipients/u2', { email: 'u2@example.com' })).status, 201);
      const defined = await call('PUT', '/workflows/later', {
        steps: [
          { type: 'delay', for: 'PT1H' },
          { type: 'send', channel: 'inapp', content: { title: 'Hi', body: 'later' } },
        ],
      });
      assert.equal(defined.status, 201, JSON.stringify(defined.json));
      const triggered = await call('POST', '/workflows/later/trigger', { recipients: ['u2'] });
      assert.equal(triggered.status, 201, JSON.stringify(triggered.json));
      const runId = triggered.json.runs[0].runId as string;
      const ofRun = (runs: StreamClient['runs']) => runs.filter((r) => r.change.runId === runId);
      await eventually(
        () => verified('/stored-waiting', hook.secret).length === 2 && ofRun(wide.runs).length === 2,
        30_000,
        "the run's two changes at the callback and on the stream",
      );
      const bodies = verified('/stored-waiting', hook.secret);
      assert.deepEqual(steps(bodies.map((b) => b.data)), ['null>RUNNING', 'RUNNING>WAITING']);
      assert.ok(bodies.every((b) => b.data.runId === runId && b.data.at === bodies[0]?.data.at));
      const messageIds = receiver.at('/stored-waiting').map((r) => r.headers['webhook-id']);
      assert.equal(new Set(messageIds).size, 2, 'a webhook-id each');
      const [running, waiting] = ofRun(wide.runs);
      assert.deepEqual(steps([running?.change ?? {}, waiting?.change ?? {}]), [
        'null>RUNNING',
        'RUNNING>WAITING',
      ]);
      assert.notEqual(running?.id, waiting?.id);
      // A client that left after the RUNNING gets the WAITING, and not the RUNNING again.
      const resumed = open('', running?.id);
      await eventually(() => ofRun(resumed.runs).length >= 1, 20_000, 'the replayed WAITING');
      assert.deepEqual(
        ofRun(resumed.runs).map((r) => `${r.id}:${r.change.previousStatus}>${r.change.status}`),
        [`${waiting?.id}:RUNNING>WAITING`],
      );
    });
  });
}
