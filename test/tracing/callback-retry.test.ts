// A status callback whose first attempt fails waits in the outbox of retries, and its retry
// is read back from there, not from the status log. The retry's POST is still a span of the
// notification's trace (a child of the accepting server span, like the first attempt) and its
// request carries that span's `traceparent`: the outbox keeps the trace context with the message.
// Checked against a real OTLP/HTTP receiver and a real callback receiver (docs/tracing.md).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { tempDir } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import {
  type HeraldProcess,
  oneProcessEnv,
  passwordLogin,
  startHeraldProcess,
} from '../helpers/herald-process.ts';
import { type CallbackReceiver, startCallbackReceiver } from '../helpers/peers/callback-receiver.ts';
import { KIND, type OtlpReceiver, startOtlpReceiver } from '../helpers/peers/otlp.ts';

const ADMIN = { email: 'admin@example.com', password: 'tracing-retry-password-1' };

describe('a retried status callback', () => {
  it("continues the notification's trace from the outbox and carries its traceparent", async () => {
    const otlp = await startOtlpReceiver();
    const hooks = await startCallbackReceiver();
    // The first attempt is refused (503): the message goes to the outbox and is retried.
    hooks.script('/retried', 503);
    const proc = await startHeraldProcess(
      'tracing-retry',
      oneProcessEnv(tempDir('herald-tracing-retry-'), ADMIN, {
        HERALD_CALLBACK_ALLOWED_HOSTS: hooks.host,
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '50',
      }),
    );
    try {
      await retriedInTrace(proc, otlp, hooks);
    } finally {
      await proc.stop(5000);
      await otlp.close();
      await hooks.close();
    }
  });
});

/** Sends a traced notification whose callback is refused once; checks both attempts' spans. */
async function retriedInTrace(
  proc: HeraldProcess,
  otlp: OtlpReceiver,
  hooks: CallbackReceiver,
): Promise<void> {
  const api = proc.apiUrl as string;
  const token = await passwordLogin(api, ADMIN);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const hook = await fetch(`${api}/callbacks`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ url: `${hooks.origin}/retried`, events: ['DELIVERED'] }),
  });
  assert.equal(hook.status, 201, await hook.clone().text());
  const traceId = randomBytes(16).toString('hex');
  const accepted = await fetch(`${api}/notifications`, {
    method: 'POST',
    headers: { ...headers, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    body: JSON.stringify({
      channel: 'email',
      recipient: { email: 'retried@example.com' },
      content: { subject: 'Retried', text: 'Retried' },
    }),
  });
  assert.equal(accepted.status, 201, await accepted.clone().text());

  await eventually(() => hooks.at('/retried').length >= 2, 60_000, 'the retried callback').catch(
    (error: Error) => {
      throw new Error(`${error.message}; output:\n${proc.output()}`);
    },
  );
  const posts = () => otlp.spans.filter((s) => s.name === 'POST' && s.traceId === traceId);
  await eventually(() => posts().length >= 2, 30_000, 'both callback spans exported');

  const server = otlp.spans.find((s) => s.name === 'POST /notifications' && s.traceId === traceId);
  assert.ok(server, 'the server span');
  const spans = posts();
  assert.equal(spans.length, 2, 'one span an attempt');
  for (const span of spans) {
    assert.equal(span.kind, KIND.CLIENT);
    assert.equal(span.parentSpanId, server.spanId, 'each attempt is a child of the accepting span');
  }
  assert.deepEqual(
    spans.map((s) => s.attributes['http.response.status_code']).sort(),
    [204, 503],
    'the first attempt refused, the retry taken',
  );
  // Each request carries its own attempt's span, the retry included.
  const carried = hooks.at('/retried').map((r) => r.headers.traceparent);
  assert.deepEqual(
    carried.sort(),
    spans.map((s) => `00-${traceId}-${s.spanId}-01`).sort(),
    "each attempt's request carries its span's traceparent",
  );
}
