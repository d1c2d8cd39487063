// The worker role built once (src/dispatch/role.ts) and run both ways, on SQLite: on the main
// thread, and in the dispatch thread whose entry builds it with the same function. Through the
// same interface (HeraldDeps.worker, a WorkerHandle) each form accepts a notification and
// delivers it to the sandbox, previews (a render error crossing back as itself), and counts the
// send in the process's metrics.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Herald, startHerald } from '../../src/main.ts';
import { RenderError } from '../../src/templates/render-error.ts';
import { apiCall } from '../helpers/api-call.ts';
import { tokenFor } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';

for (const threaded of [false, true]) {
  describe(`the worker role ${threaded ? 'in the dispatch thread' : 'on the main thread'}`, () => {
    let herald: Herald;
    let api: string;
    let token: string;
    before(async () => {
      herald = await startHerald(
        testConfig({ HERALD_ROLES: 'auth,api,worker', HERALD_DISPATCH_THREAD: String(threaded) }),
      );
      api = herald.apiUrl as string;
      token = await tokenFor(herald.deps, { role: 'admin', tenant: 'acme' });
    });
    after(() => herald?.close());

    it('is the form asked for: only the thread commits the API’s rows and hints its changes', () => {
      const { worker } = herald.deps;
      assert.equal(worker.insertMany !== undefined, threaded);
      assert.equal(worker.statusChanges !== undefined, threaded);
      assert.equal(worker.metrics !== undefined, threaded);
    });

    it('accepts a notification and delivers it to the sandbox', { timeout: 60_000 }, async () => {
      const accepted = await apiCall(api, token, 'POST', '/notifications', {
        channel: 'email',
        recipient: { email: 'someone@example.com' },
        content: { subject: 'Hi', text: 'Hello' },
      });
      assert.equal(accepted.status, 201);
      const id = accepted.json.notificationId as string;
      await eventually(
        async () => (await apiCall(api, token, 'GET', `/notifications/${id}`)).json.status === 'DELIVERED',
        30_000,
        'delivered',
      );
      const sandbox = await apiCall(api, token, 'GET', `/admin/sandbox?notificationId=${id}`);
      assert.equal(sandbox.status, 200);
      assert.equal(sandbox.json.items.length, 1);
      assert.deepEqual(
        { subject: sandbox.json.items[0].content.subject, text: sandbox.json.items[0].content.text },
        { subject: 'Hi', text: 'Hello' },
      );
    });

    it('previews, a render error crossing back as a RenderError', async () => {
      const template = {
        tenant: 'acme',
        key: 'loop',
        channel: 'sms' as const,
        version: 1,
        content: { text: '{% for i in (1..n) %}{{ i }}{% endfor %}' },
        sampleVariables: null,
        category: null,
        createdAt: 0,
        updatedAt: 0,
      };
      const { renderer } = herald.deps.worker;
      assert.deepEqual(await renderer.preview(template, { n: 3 }), { text: '123' });
      await assert.rejects(
        renderer.preview(template, { n: 40_000_000 }),
        (error) => error instanceof RenderError && error.limit && /over the limit/.test(error.message),
      );
    });

    it("counts the send in the process's metrics", async () => {
      const text = await herald.deps.metrics.exposition();
      assert.match(text, /^herald_delivery_outcomes_total\{provider="sandbox",outcome="delivered"\} 1$/m);
      assert.match(text, /^herald_notifications_accepted_total\{[^}]*\} 1$/m);
      assert.match(text, /^herald_pickup_latency_seconds_count\{priority="NORMAL"\} 1$/m);
      assert.equal(text.match(/^process_cpu_user_seconds_total /gm)?.length, 1);
    });
  });
}
