import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { countRows, devicePush, email, notificationsApp, sms } from './fixtures.ts';

describe('POST /notifications/batch', () => {
  let t: Awaited<ReturnType<typeof notificationsApp>>;
  before(async () => {
    t = await notificationsApp({ HERALD_BATCH_BODY_LIMIT: String(2 * 1024 * 1024) });
    const created = await t.app.inject({
      method: 'POST',
      url: '/templates',
      headers: t.admin,
      payload: { key: 'otp', channel: 'sms', text: 'Code {{ code }}' },
    });
    assert.equal(created.statusCode, 201);
  });
  after(() => t.close());

  const batch = (notifications: unknown, headers = t.sender) =>
    t.app.inject({
      method: 'POST',
      url: '/notifications/batch',
      headers,
      payload: { notifications } as object,
    });

  it('answers 207 with a result per item: good ones stored, bad ones with their own problem', async () => {
    const before = countRows(t.deps);
    const response = await batch([
      email(),
      sms({ recipient: { phone: '12' } }),
      { ...sms(), content: undefined, template: 'otp', variables: { code: '123456' } },
      { ...sms(), content: undefined, template: 'missing' },
      devicePush({ extra: true }),
      'not an object',
    ]);
    assert.equal(response.statusCode, 207);
    const { results } = response.json();
    assert.deepEqual(
      results.map((r: { index: number }) => r.index),
      [0, 1, 2, 3, 4, 5],
    );
    assert.equal(results[0].status, 'QUEUED');
    assert.equal(results[2].status, 'QUEUED');
    assert.equal(results[1].error.code, 'VALIDATION_FAILED');
    assert.equal(results[1].error.errors[0].path, 'body/notifications/1/recipient/phone');
    assert.equal(results[3].error.code, 'TEMPLATE_NOT_FOUND');
    assert.equal(results[3].error.status, 422);
    assert.equal(results[4].error.errors[0].path, 'body/notifications/4/extra');
    assert.equal(results[5].error.code, 'VALIDATION_FAILED');
    assert.equal(countRows(t.deps), before + 2);
    const pinned = await t.app.inject({
      method: 'GET',
      url: `/notifications/${results[2].notificationId}`,
      headers: t.sender,
    });
    assert.equal(pinned.json().template, 'otp');
    assert.equal(pinned.json().templateVersion, 1);
  });

  it('stores 1000 notifications in one commit', async () => {
    const before = t.deps.ingest.stats();
    const rows = countRows(t.deps);
    const items = Array.from({ length: 1000 }, (_, i) =>
      sms({ priority: i % 2 ? 'LOW' : 'HIGH', metadata: { i } }),
    );
    const response = await batch(items);
    assert.equal(response.statusCode, 207);
    const { results } = response.json();
    assert.equal(results.length, 1000);
    assert.ok(results.every((r: { status?: string }) => r.status === 'QUEUED'));
    assert.equal(new Set(results.map((r: { notificationId: string }) => r.notificationId)).size, 1000);
    assert.equal(t.deps.ingest.stats().flushes - before.flushes, 1);
    assert.equal(countRows(t.deps), rows + 1000);
    const metrics = await t.deps.metrics?.registry.getSingleMetricAsString(
      'herald_notifications_accepted_total',
    );
    assert.match(metrics ?? '', /channel="sms",priority="LOW"} 500/);
    assert.match(metrics ?? '', /channel="sms",priority="HIGH"} 500/);
  });

  it('refuses more than 1000 items, an empty list and unknown fields with 400, storing nothing', async () => {
    const rows = countRows(t.deps);
    assert.equal((await batch(Array.from({ length: 1001 }, () => sms()))).statusCode, 400);
    assert.equal((await batch([])).statusCode, 400);
    const extra = await t.app.inject({
      method: 'POST',
      url: '/notifications/batch',
      headers: t.sender,
      payload: { notifications: [sms()], dryRun: true },
    });
    assert.equal(extra.statusCode, 400);
    assert.equal(countRows(t.deps), rows);
  });

  it('takes bodies above the single-request limit up to the batch limit', async () => {
    const items = Array.from({ length: 100 }, () => sms({ metadata: { pad: 'x'.repeat(1000) } }));
    assert.equal((await batch(items)).statusCode, 207);
    const huge = Array.from({ length: 1000 }, () => sms({ metadata: { pad: 'x'.repeat(3000) } }));
    assert.equal((await batch(huge)).statusCode, 413);
  });

  it('needs the notifications:send scope', async () => {
    assert.equal((await batch([sms()], t.viewer)).statusCode, 403);
  });
});
