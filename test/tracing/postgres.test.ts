// One notification, one trace, across processes on PostgreSQL (docs/tracing.md): a `herald start`
// with the roles `auth,api` accepts a notification and triggers a workflow for a topic, each
// request carrying a `traceparent`; a second `herald start` with the role `worker` on the same
// database fans the topic out, runs the workflow and processes both notifications. Both export
// to a real OTLP/HTTP receiver in the default protocol, http/protobuf, decoded there with the
// message types generated from opentelemetry-proto. The worker's `process` spans continue the
// accepting requests' traces, read from the context PostgreSQL stored (`trace_context`).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { connectPostgres, type Sql } from '../../src/store/postgres/connect.ts';
import { tempDir } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { type HeraldProcess, passwordLogin, startHeraldProcess } from '../helpers/herald-process.ts';
import { KIND, type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../helpers/peers/otlp.ts';
import { type PostgresServer, startPostgres } from '../helpers/postgres.ts';

const ADMIN = { email: 'admin@example.com', password: 'tracing-pg-test-password-1' };
const RECIPIENT = 'ada.traced.pg@example.com';
const SUBSCRIBER = 'grace.traced.pg@example.com';

describe('OpenTelemetry traces across an api and a worker process on PostgreSQL', () => {
  let server: PostgresServer | undefined;
  let sql: Sql | undefined;
  let otlp: OtlpReceiver | undefined;
  const started: HeraldProcess[] = [];
  after(async () => {
    await Promise.all(started.map((p) => p.stop(5000)));
    await otlp?.close();
    await sql?.end({ timeout: 1 });
    await server?.stop();
  });

  it('continues the accepting request’s trace in the worker process, decoded from OTLP/protobuf', async () => {
    server = await startPostgres();
    otlp = await startOtlpReceiver();
    const url = await server.createDatabase('herald_tracing');
    const common = {
      DATABASE_URL: url,
      HERALD_JWT_ISSUER: 'http://herald.test',
      HERALD_HOST: '127.0.0.1',
      HERALD_API_PORT: '0',
      HERALD_DATA_DIR: tempDir('herald-tracing-pg-'),
      HERALD_POLL_MS: '100',
      LOG_LEVEL: 'warn',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
    };
    // The API first (it migrates and bootstraps the admin), then the worker.
    const api = await startHeraldProcess('tracing-pg-api', {
      ...common,
      HERALD_ROLES: 'auth,api',
      HERALD_ADMIN_EMAIL: ADMIN.email,
      HERALD_ADMIN_PASSWORD: ADMIN.password,
    });
    started.push(api);
    const base = api.apiUrl as string;
    const token = await passwordLogin(base, ADMIN);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const send = (method: string, path: string, body: object, traceparent?: string) =>
      fetch(`${base}${path}`, {
        method,
        headers: traceparent === undefined ? headers : { ...headers, traceparent },
        body: JSON.stringify(body),
      });
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const accepted = await send(
      'POST',
      '/notifications',
      { channel: 'email', recipient: { email: RECIPIENT }, content: { subject: 'Traced', text: 'Hello' } },
      `00-${traceId}-${callerSpan}-01`,
    );
    assert.equal(accepted.status, 201, await accepted.clone().text());
    const { notificationId } = (await accepted.json()) as { notificationId: string };

    // A workflow for a topic: its runs are made later, by the worker's fan-out, from the trigger's row.
    assert.equal((await send('PUT', '/recipients/grace', { email: SUBSCRIBER })).status, 201);
    assert.equal((await send('PUT', '/topics/traced', {})).status, 201);
    assert.equal((await send('POST', '/topics/traced/subscribers', { recipients: ['grace'] })).status, 200);
    const defined = await send('PUT', '/workflows/traced-digest', {
      steps: [{ type: 'send', channel: 'email', content: { subject: 'News', text: 'Hello' } }],
    });
    assert.equal(defined.status, 201, await defined.clone().text());
    const runTrace = randomBytes(16).toString('hex');
    const triggered = await send(
      'POST',
      '/workflows/traced-digest/trigger',
      { topic: 'traced' },
      `00-${runTrace}-${randomBytes(8).toString('hex')}-01`,
    );
    assert.equal(triggered.status, 201, await triggered.clone().text());

    const worker = await startHeraldProcess('tracing-pg-worker', { ...common, HERALD_ROLES: 'worker' });
    started.push(worker);
    const receiver = otlp;
    const sent = (trace: string) =>
      receiver.spans.some((s) => s.name === 'send sandbox' && s.traceId === trace);
    await eventually(() => sent(traceId) && sent(runTrace), 60_000, 'both notifications sent').catch(
      (error: Error) => {
        throw new Error(
          `${error.message}; spans ${receiver.spans.map((s) => s.name)}; worker:\n${worker.output()}`,
        );
      },
    );

    const named = (name: string, trace: string): ReceivedSpan => {
      const found = receiver.spans.filter((s) => s.name === name && s.traceId === trace);
      assert.equal(
        found.length,
        1,
        `one "${name}" span; got ${JSON.stringify(receiver.spans.map((s) => s.name))}`,
      );
      return found[0] as ReceivedSpan;
    };
    const accepting = named('POST /notifications', traceId);
    assert.equal(accepting.kind, KIND.SERVER);
    assert.equal(accepting.parentSpanId, callerSpan);
    assert.equal(accepting.attributes['http.response.status_code'], 201);
    assert.deepEqual(
      accepting.events.map((e) => [e.name, e.attributes['herald.notifications']]),
      [['commit', 1]],
    );
    // What PostgreSQL stored is what the worker process read.
    sql = connectPostgres(url, { max: 1 });
    const [row] = await sql<{ trace_context: string }[]>`
      SELECT trace_context FROM notifications WHERE id = ${notificationId}`;
    assert.equal(row?.trace_context, `00-${traceId}-${accepting.spanId}-01`);

    const processed = named('process email', traceId);
    assert.equal(processed.kind, KIND.CONSUMER);
    assert.equal(processed.parentSpanId, accepting.spanId, 'the worker process continues the trace');
    assert.deepEqual(processed.links, [{ traceId, spanId: accepting.spanId }]);
    assert.equal(processed.attributes['messaging.message.id'], notificationId);
    assert.equal(processed.attributes['herald.outcome'], 'delivered');
    assert.equal(named('render', traceId).parentSpanId, processed.spanId);
    const provider = named('send sandbox', traceId);
    assert.equal(provider.kind, KIND.CLIENT);
    assert.equal(provider.parentSpanId, processed.spanId);
    assert.equal(typeof provider.attributes['herald.attempt'], 'number', 'a 64-bit integer, decoded');

    // The topic's run, made by the fan-out in the worker, sends in the trigger's trace.
    const trigger = named('POST /workflows/:key/trigger', runTrace);
    assert.equal(named('process email', runTrace).parentSpanId, trigger.spanId);

    assert.ok(receiver.contentTypes.length > 0);
    assert.ok(
      receiver.contentTypes.every((t) => t.startsWith('application/x-protobuf')),
      'the default protocol',
    );
    assert.deepEqual(receiver.undecoded, []);
    const everything = JSON.stringify(receiver.spans);
    for (const secretText of [RECIPIENT, SUBSCRIBER, token, ADMIN.password]) {
      assert.ok(!everything.includes(secretText), 'no span holds an address, a token or a secret');
    }
  });
});
