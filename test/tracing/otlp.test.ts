// One notification, one trace (docs/tracing.md), against a real OTLP/HTTP receiver: a `herald
// start` on SQLite with only the API (no worker) accepts a notification whose request carries a
// `traceparent`, and a workflow trigger with another, and is stopped; started again with the
// worker, it processes the notification and posts its status callback, and runs the workflow.
// Every span arrives at the receiver as OTLP/JSON (the `http/json` protocol; the default
// http/protobuf is decoded by postgres.test.ts) and they make one trace: the caller's span, the
// server span with its commit event, and after the restart the `process` span (linked to the
// accepting one), its render and provider call, and the callback's POST, whose request carries
// the callback span's `traceparent`. The trigger's commit is an event of its server span, and the
// run's notification is processed in the trigger's trace.
// No span holds a recipient's address, the access token, the callback's secret or the body.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { tempDir } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import {
  type HeraldProcess,
  oneProcessEnv,
  passwordLogin,
  startHeraldProcess,
} from '../helpers/herald-process.ts';
import { type CallbackReceiver, startCallbackReceiver } from '../helpers/peers/callback-receiver.ts';
import { KIND, type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../helpers/peers/otlp.ts';

const ADMIN = { email: 'admin@example.com', password: 'tracing-test-password-1' };
const RECIPIENT = 'ada.traced@example.com';
const RUN_RECIPIENT = 'grace.traced@example.com';
const BODY_MARK = 'body-text-never-in-a-span';
const VARIABLE_MARK = 'variable-never-in-a-span';

describe('OpenTelemetry traces, end to end', () => {
  let proc: HeraldProcess | undefined;
  let otlp: OtlpReceiver | undefined;
  let hooks: CallbackReceiver | undefined;
  after(async () => {
    await proc?.stop(5000);
    await otlp?.close();
    await hooks?.close();
  });

  it('makes one trace of a notification from its request to its callback, across a restart', async () => {
    otlp = await startOtlpReceiver();
    hooks = await startCallbackReceiver();
    const env = oneProcessEnv(tempDir('herald-tracing-'), ADMIN, {
      HERALD_CALLBACK_ALLOWED_HOSTS: hooks.host,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
    // Accepted by a Herald without a worker: processed only after the restart.
    proc = await startHeraldProcess('tracing-api', { ...env, HERALD_ROLES: 'auth,api' });
    const api = proc.apiUrl as string;
    const token = await passwordLogin(api, ADMIN);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const hook = await fetch(`${api}/callbacks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: `${hooks.origin}/traced`, events: ['DELIVERED'] }),
    });
    assert.equal(hook.status, 201);
    const { secret } = (await hook.json()) as { secret: string };
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const accepted = await fetch(`${api}/notifications?utm_source=${VARIABLE_MARK}`, {
      method: 'POST',
      headers: { ...headers, traceparent: `00-${traceId}-${callerSpan}-01` },
      body: JSON.stringify({
        channel: 'email',
        recipient: { email: RECIPIENT },
        content: { subject: 'Traced {{ code }}', text: `${BODY_MARK} {{ code }}` },
        variables: { code: VARIABLE_MARK },
      }),
    });
    assert.equal(accepted.status, 201, await accepted.clone().text());
    const { notificationId } = (await accepted.json()) as { notificationId: string };

    // A workflow triggered in another trace: its run stores the trigger's context, and the
    // notification its send step makes (after the restart) carries it.
    const put = (path: string, body: object) =>
      fetch(`${api}${path}`, { method: 'PUT', headers, body: JSON.stringify(body) });
    assert.equal((await put('/recipients/grace', { email: RUN_RECIPIENT })).status, 201);
    const defined = await put('/workflows/traced-welcome', {
      steps: [{ type: 'send', channel: 'email', content: { subject: 'Welcome', text: BODY_MARK } }],
    });
    assert.equal(defined.status, 201, await defined.clone().text());
    const runTrace = randomBytes(16).toString('hex');
    const triggerCaller = randomBytes(8).toString('hex');
    const triggered = await fetch(`${api}/workflows/traced-welcome/trigger`, {
      method: 'POST',
      headers: { ...headers, traceparent: `00-${runTrace}-${triggerCaller}-01` },
      body: JSON.stringify({ recipients: ['grace'] }),
    });
    assert.equal(triggered.status, 201, await triggered.clone().text());
    const { runs } = (await triggered.json()) as { runs: Array<{ runId: string }> };
    await proc.stop();

    proc = await startHeraldProcess('tracing-worker', { ...env, HERALD_API_PORT: '0' });
    const receiver = hooks;
    const worker = proc;
    await eventually(() => receiver.at('/traced').length > 0, 60_000, 'the status callback').catch(
      (error: Error) => {
        throw new Error(
          `${error.message}; spans ${otlp?.spans.map((s) => s.name)}; output:\n${worker.output()}`,
        );
      },
    );
    const received = otlp;
    await eventually(
      () => received.spans.some((s) => s.name === 'process email' && s.traceId === runTrace),
      60_000,
      "the run's notification processed",
    );
    const run = (await (
      await fetch(`${worker.apiUrl}/workflow-runs/${runs[0]?.runId}`, {
        headers: { authorization: `Bearer ${token}` },
      })
    ).json()) as { steps: Array<{ notificationId?: string }> };
    await proc.stop();
    const spans = otlp.spans;
    const named = (name: string, trace = traceId): ReceivedSpan => {
      const found = spans.filter((s) => s.name === name && s.traceId === trace);
      assert.equal(
        found.length,
        1,
        `one "${name}" span in the trace; got ${JSON.stringify(spans.map((s) => s.name))}`,
      );
      return found[0] as ReceivedSpan;
    };

    const server = named('POST /notifications');
    assert.equal(server.kind, KIND.SERVER);
    assert.equal(server.parentSpanId, callerSpan, 'the server span continues the incoming traceparent');
    assert.equal(server.service, 'herald');
    assert.equal(server.attributes['http.route'], '/notifications');
    assert.equal(server.attributes['http.request.method'], 'POST');
    assert.equal(server.attributes['url.path'], '/notifications', 'no query string');
    assert.equal(server.attributes['http.response.status_code'], 201);

    // The commit is an event of the server span (decision 0039), with the time it waited.
    assert.equal(spans.filter((s) => s.name === 'commit').length, 0, 'no commit span');
    const commits = server.events.filter((e) => e.name === 'commit');
    assert.equal(commits.length, 1);
    assert.equal(commits[0]?.attributes['herald.notifications'], 1);
    assert.equal(typeof commits[0]?.attributes['herald.wait_ms'], 'number');

    const processed = named('process email');
    assert.equal(processed.kind, KIND.CONSUMER);
    assert.equal(processed.parentSpanId, server.spanId, 'processed in the accepting trace, after a restart');
    assert.deepEqual(processed.links, [{ traceId, spanId: server.spanId }]);
    assert.equal(processed.attributes['messaging.system'], 'herald');
    assert.equal(processed.attributes['messaging.operation.type'], 'process');
    assert.equal(processed.attributes['messaging.message.id'], notificationId);
    assert.equal(processed.attributes['herald.outcome'], 'delivered');

    assert.equal(named('render').parentSpanId, processed.spanId);
    const send = named('send sandbox');
    assert.equal(send.kind, KIND.CLIENT);
    assert.equal(send.parentSpanId, processed.spanId);
    assert.equal(send.attributes['herald.provider'], 'sandbox');
    assert.equal(send.attributes['herald.outcome'], 'delivered');

    const callback = named('POST');
    assert.equal(callback.kind, KIND.CLIENT);
    assert.equal(callback.parentSpanId, server.spanId);
    assert.equal(callback.attributes['http.response.status_code'], 204);
    // (The run's notification has a callback of its own, in the run's trace.)
    const carried = receiver
      .at('/traced')
      .map((r) => String(r.headers.traceparent))
      .filter((t) => t.includes(traceId));
    assert.deepEqual(carried, [`00-${traceId}-${callback.spanId}-01`], 'the callback carries its span');

    // The run's send: processed in the trigger's trace, a child of (and linked to) its server span.
    const trigger = named('POST /workflows/:key/trigger', runTrace);
    assert.equal(trigger.parentSpanId, triggerCaller);
    // The trigger's group commit is an event of its server span too: its runs, the time it waited.
    const triggerCommits = trigger.events.filter((e) => e.name === 'commit');
    assert.equal(triggerCommits.length, 1);
    assert.equal(triggerCommits[0]?.attributes['herald.runs'], 1);
    assert.equal(typeof triggerCommits[0]?.attributes['herald.wait_ms'], 'number');
    const runSend = named('process email', runTrace);
    assert.equal(
      runSend.parentSpanId,
      trigger.spanId,
      "the run's notification continues the trigger's trace",
    );
    assert.deepEqual(runSend.links, [{ traceId: runTrace, spanId: trigger.spanId }]);
    assert.equal(runSend.attributes['messaging.message.id'], run.steps[0]?.notificationId);
    assert.equal(named('send sandbox', runTrace).parentSpanId, runSend.spanId);

    // What a span may hold: ids, channels, priorities, providers, statuses, counts.
    const everything = JSON.stringify(spans);
    for (const secretText of [
      RECIPIENT,
      RUN_RECIPIENT,
      token,
      secret,
      ADMIN.password,
      BODY_MARK,
      VARIABLE_MARK,
    ]) {
      assert.ok(!everything.includes(secretText), 'no span holds an address, a token, a secret or a body');
    }
    assert.ok(otlp.contentTypes.every((t) => t.startsWith('application/json')));
    assert.deepEqual(otlp.undecoded, []);
  });
});
