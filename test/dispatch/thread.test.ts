import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { tempDir } from '../helpers/config.ts';
import {
  type HeraldProcess,
  oneProcessEnv,
  passwordLogin,
  startHeraldProcess,
} from '../helpers/herald-process.ts';

// `npm start`'s layout (docs/dispatch.md, "Threads"): HTTP on the main thread, the worker role
// in the dispatch thread, whose SQLite connection also commits every new notification. The main
// thread's own writes (templates, cancels, throttles) share the file with it: none may fail or
// be lost for that, and the process reports both threads' metrics as one.
const ADMIN = { email: 'admin@example.com', password: 'thread-test-password-1' };

describe('the dispatch thread (npm start layout, one real process)', () => {
  let proc: HeraldProcess;
  let api: string;
  let headers: Record<string, string>;

  before(async () => {
    proc = await startHeraldProcess('thread', oneProcessEnv(tempDir('herald-thread-'), ADMIN));
    api = proc.apiUrl as string;
    const token = await passwordLogin(api, ADMIN);
    headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  });
  after(async () => {
    await proc?.stop(5000);
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${api}${path}`, {
      method,
      headers: body === undefined ? { authorization: headers.authorization as string } : headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const statusOf = async (id: string) => (await call('GET', `/notifications/${id}`)).body.status;

  it('commits and delivers while the main thread writes templates and cancels, with no request failing', {
    timeout: 60_000,
  }, async () => {
    assert.equal(
      (
        await call('POST', '/templates', {
          key: 'receipt',
          channel: 'email',
          subject: 'Receipt {{ n }}',
          text: 'Thanks, {{ name }}',
        })
      ).status,
      201,
    );
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const answers = await Promise.all([
      ...Array.from({ length: 150 }, (_, i) =>
        call('POST', '/notifications', {
          channel: 'email',
          priority: (['CRITICAL', 'HIGH', 'NORMAL', 'LOW'] as const)[i % 4],
          recipient: { email: `user-${i}@example.com` },
          template: 'receipt',
          variables: { n: i, name: `User ${i}` },
        }),
      ),
      // Writes made on the main thread's own connection, interleaved with the thread's commits and claims.
      ...Array.from({ length: 20 }, (_, i) =>
        call('PUT', '/templates/receipt', { subject: `Receipt v${i} {{ n }}`, text: 'Thanks, {{ name }}' }),
      ),
      ...Array.from({ length: 20 }, (_, i) =>
        call('POST', '/notifications', {
          channel: 'email',
          recipient: { email: `later-${i}@example.com` },
          content: { subject: 'Later', text: 'Later' },
          scheduledAt: later,
        }),
      ),
    ]);
    const failed = answers.filter((a) => a.status >= 300);
    assert.deepEqual(failed, [], 'every request succeeds');
    const scheduled = answers.slice(170).map((a) => a.body.notificationId as string);
    const cancels = await Promise.all(scheduled.map((id) => call('POST', `/notifications/${id}/cancel`)));
    assert.deepEqual(
      cancels.map((c) => c.body.status),
      scheduled.map(() => 'CANCELLED'),
    );

    const sent = answers.slice(0, 150).map((a) => a.body.notificationId as string);
    let pending = sent;
    for (let i = 0; i < 100 && pending.length > 0; i++) {
      const statuses = await Promise.all(pending.map(statusOf));
      pending = pending.filter((_, j) => statuses[j] !== 'DELIVERED');
      if (pending.length > 0) await sleep(100);
    }
    assert.deepEqual(pending, [], 'every notification is delivered by the dispatch thread');
  });

  it('answers an Idempotency-Key replay sent at the same time with the one notification', async () => {
    const body = {
      channel: 'sms',
      recipient: { phone: '+447700900123' },
      content: { text: 'Your code is 123456' },
    };
    const send = () =>
      fetch(`${api}/notifications`, {
        method: 'POST',
        headers: { ...headers, 'idempotency-key': 'thread-twin-1' },
        body: JSON.stringify(body),
      }).then(async (r) => ({
        status: r.status,
        id: ((await r.json()) as { notificationId: string }).notificationId,
      }));
    const answers = await Promise.all([send(), send(), send()]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 201]);
    assert.equal(new Set(answers.map((a) => a.id)).size, 1);
  });

  it("previews in the dispatch thread's render pool, its render errors answered as on one thread", async () => {
    assert.equal(
      (
        await call('POST', '/templates', {
          key: 'loop',
          channel: 'sms',
          text: '{% for i in (1..n) %}{{ i }}{% endfor %}',
        })
      ).status,
      201,
    );
    const fine = await call('POST', '/templates/loop/preview', { variables: { n: 3 } });
    assert.equal(fine.status, 200);
    assert.deepEqual(fine.body.content, { text: '123' });
    const limit = await call('POST', '/templates/loop/preview', { variables: { n: 40_000_000 } });
    assert.equal(limit.status, 422);
    assert.equal(limit.body.code, 'RENDER_LIMIT');
    assert.match(String(limit.body.detail), /a loop over 40000000 items is over the limit/);
    const missing = await call('POST', '/templates/loop/preview', { variables: {} });
    assert.equal(missing.status, 400);
    assert.match(String(missing.body.detail), /undefined variable: n/);
    // Nested too deep for the hand-over to the thread: refused before it, as at acceptance.
    const deep = await fetch(`${api}/templates/loop/preview`, {
      method: 'POST',
      headers,
      body: `{"variables":{"n":${'['.repeat(12_000)}${']'.repeat(12_000)}}}`,
    });
    assert.equal(deep.status, 400, await deep.clone().text());
    assert.match(
      String(((await deep.json()) as { errors: Array<{ message: string }> }).errors[0]?.message),
      /32 levels/,
    );
  });

  it("reports the dispatch thread's sends in the process's /metrics, and the process metrics once", async () => {
    const response = await fetch(`${api}/metrics`, { headers });
    assert.equal(response.status, 200);
    const text = await response.text();
    const delivered =
      /^herald_delivery_outcomes_total\{provider="sandbox",outcome="delivered"\} (\d+)$/m.exec(text);
    assert.ok(delivered && Number(delivered[1]) >= 151, `delivered outcomes counted: ${delivered?.[0]}`);
    const accepted = [...text.matchAll(/^herald_notifications_accepted_total\{[^}]*\} (\d+)$/gm)].reduce(
      (sum, m) => sum + Number(m[1]),
      0,
    );
    assert.equal(accepted, 171);
    assert.match(text, /^herald_pickup_latency_seconds_count\{priority="CRITICAL"\} \d+$/m);
    assert.equal(text.match(/^process_cpu_user_seconds_total /gm)?.length, 1);
  });
});
