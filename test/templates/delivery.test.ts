import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Herald, startHerald } from '../../src/main.ts';
import { authHeader } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';

const TERMINAL = new Set(['DELIVERED', 'FAILED', 'CANCELLED', 'EXPIRED']);

describe('templates at delivery, through the real worker', () => {
  let herald: Herald;
  let headers: { authorization: string };
  before(async () => {
    herald = await startHerald(testConfig({ HERALD_ROLES: 'auth,api,worker' }));
    headers = await authHeader(herald.deps, { role: 'admin' });
  });
  after(() => herald.close());

  const api = () => herald.api as NonNullable<Herald['api']>;
  async function settle(id: string) {
    for (;;) {
      const body = (await api().inject({ method: 'GET', url: `/notifications/${id}`, headers })).json();
      if (TERMINAL.has(body.status)) return body;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  const send = async (payload: object) => {
    const response = await api().inject({ method: 'POST', url: '/notifications', headers, payload });
    assert.equal(response.statusCode, 201, response.body);
    return response.json().notificationId as string;
  };

  it('fails a notification with a missing variable at once, naming it in the event detail', async () => {
    const id = await send({
      channel: 'sms',
      recipient: { phone: '+15550101234' },
      content: { text: 'Your code is {{ code }}' },
      variables: { other: 1 },
    });
    const body = await settle(id);
    assert.equal(body.status, 'FAILED');
    assert.equal(body.attempts, 1);
    const failed = body.events.find((e: { type: string }) => e.type === 'FAILED');
    assert.match(failed.detail, /undefined variable: code/);
  });

  it('delivers the pinned template version, rendered and escaped', async () => {
    const create = { key: 'hello', channel: 'email', subject: 'Hi {{ name }}', html: '<b>{{ name }}</b>' };
    await api().inject({ method: 'POST', url: '/templates', headers, payload: create });
    const id = await send({
      channel: 'email',
      recipient: { email: 'ada@example.com' },
      template: 'hello',
      variables: { name: 'A&B' },
    });
    await api().inject({
      method: 'PUT',
      url: '/templates/hello',
      headers,
      payload: { subject: 'v2', text: 'v2' },
    });
    const body = await settle(id);
    assert.equal(body.status, 'DELIVERED');
    const sandbox = (await api().inject({ method: 'GET', url: '/admin/sandbox', headers })).json();
    const message = sandbox.items.find((m: { notificationId: string }) => m.notificationId === id);
    assert.deepEqual(message.content, { subject: 'Hi A&B', html: '<b>A&amp;B</b>' });
  });
  /**
   * The heavy template's preview, asked again as a client would while it answers 503: on a machine
   * loaded enough, its render thread is kept off the CPU for its whole wait and the answer is
   * "busy", not a verdict on the template (render-pool.ts).
   */
  async function previewOnceItGetsACpu(headers: Record<string, string>) {
    for (let attempt = 1; ; attempt++) {
      const preview = await api().inject({
        method: 'POST',
        url: '/templates/heavy/preview',
        headers,
        payload: { variables: {} },
      });
      if (preview.statusCode !== 503 || attempt === 5) return preview;
    }
  }

  it('cuts a render at its budget while /health, a preview of another tenant and a CRITICAL send go on', async () => {
    // About a second of Liquid work if nothing stopped it; the budget is 100 ms.
    const heavy = '{% for i in (1..10000) %}{% for j in (1..3000) %}{% endfor %}{% endfor %}done';
    const slow = await send({
      channel: 'sms',
      priority: 'LOW',
      recipient: { phone: '+15550101234' },
      content: { text: heavy },
    });
    const other = await authHeader(herald.deps, { role: 'admin', tenant: 'other' });
    await api().inject({
      method: 'POST',
      url: '/templates',
      headers: other,
      payload: { key: 'heavy', channel: 'sms', text: heavy },
    });
    const [health, preview, critical] = await Promise.all([
      Promise.all(Array.from({ length: 5 }, () => fetch(`${herald.apiUrl}/health`).then((r) => r.status))),
      previewOnceItGetsACpu(other),
      send({
        channel: 'sms',
        priority: 'CRITICAL',
        recipient: { phone: '+15550105678' },
        content: { text: 'Your code is {{ code }}' },
        variables: { code: '123456' },
      }).then(settle),
    ]);
    assert.deepEqual(health, [200, 200, 200, 200, 200]);
    assert.equal(critical.status, 'DELIVERED');
    assert.equal(preview.statusCode, 422);
    assert.equal(preview.json().code, 'RENDER_LIMIT');
    const cut = await settle(slow);
    assert.equal(cut.status, 'FAILED');
    const failed = cut.events.find((e: { type: string }) => e.type === 'FAILED');
    assert.match(failed.detail, /rendering ran out of time/);
  });
});
