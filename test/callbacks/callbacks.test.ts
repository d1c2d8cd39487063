// Status callbacks (API.md §10) end to end: a real Herald (API and worker, the sandbox provider)
// and a real HTTPS receiver whose every message is verified with the `standardwebhooks` package,
// as a customer's receiver would.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { type Herald, startHerald } from '../../src/main.ts';
import { apiCall } from '../helpers/api-call.ts';
import { tokenFor } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import {
  type CallbackReceiver,
  type ReceivedCallback,
  startCallbackReceiver,
} from '../helpers/peers/callback-receiver.ts';

interface Body {
  type: string;
  timestamp: string;
  data: {
    notificationId: string;
    status: string;
    previousStatus: string;
    event: { type: string };
    metadata: unknown;
  };
}

/** Requests in flight per callback in this test's Herald (HERALD_CALLBACK_CONCURRENCY). */
const SLOTS = 4;

describe('status callbacks', () => {
  let herald: Herald;
  let receiver: CallbackReceiver;
  let acme: string;
  let mallory: string;
  before(async () => {
    receiver = await startCallbackReceiver();
    herald = await startHerald(
      testConfig({
        HERALD_ROLES: 'auth,api,worker',
        HERALD_CALLBACK_ALLOWED_HOSTS: receiver.host,
        HERALD_CALLBACK_CONCURRENCY: String(SLOTS),
      }),
    );
    acme = await tokenFor(herald.deps, { role: 'admin', tenant: 'acme' });
    mallory = await tokenFor(herald.deps, { role: 'admin', tenant: 'mallory' });
  });
  after(async () => {
    await herald.close();
    await receiver.close();
  });

  const call = (token: string, method: string, path: string, body?: object) =>
    apiCall(herald.apiUrl as string, token, method, path, body);

  async function register(
    token: string,
    path: string,
    events?: string[],
  ): Promise<{ id: string; secret: string }> {
    const created = await call(token, 'POST', '/callbacks', { url: `${receiver.origin}${path}`, events });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    assert.match(created.json.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    return created.json;
  }

  async function send(token: string, metadata: object = {}): Promise<string> {
    const accepted = await call(token, 'POST', '/notifications', {
      channel: 'email',
      recipient: { email: 'someone@example.com' },
      content: { subject: 'Hi', text: 'Hello' },
      metadata,
    });
    assert.equal(accepted.status, 201);
    return accepted.json.notificationId;
  }

  /** The verified bodies a path got for one notification, as `status` values in arrival order. */
  function verified(path: string, secret: string, id?: string): Array<Body & { webhookId: string }> {
    const hook = new Webhook(secret);
    return receiver
      .at(path)
      .map((r: ReceivedCallback) => ({
        ...(hook.verify(r.body, r.headers as Record<string, string>) as Body),
        webhookId: r.headers['webhook-id'] as string,
      }))
      .filter((b) => id === undefined || b.data.notificationId === id);
  }

  const delivered = (path: string, id: string, count: number) =>
    eventually(
      () => receiver.at(path).filter((r) => r.status < 300 && r.body.includes(id)).length >= count,
      20_000,
      `${count} callbacks for ${id} at ${path}`,
    );

  it('signs every message as Standard Webhooks says, one per status change, in status order', async () => {
    const { secret } = await register(acme, '/all');
    const id = await send(acme, { order: 'A-1' });
    await delivered('/all', id, 3);
    const bodies = verified('/all', secret, id);
    assert.deepEqual(
      bodies.map((b) => `${b.data.previousStatus}>${b.data.status}`),
      ['QUEUED>PROCESSING', 'PROCESSING>SENT', 'SENT>DELIVERED'],
    );
    assert.ok(bodies.every((b) => b.type === 'notification.status' && b.data.event.type === b.data.status));
    assert.deepEqual(bodies[0]?.data.metadata, { order: 'A-1' });
    assert.equal(new Set(bodies.map((b) => b.webhookId)).size, 3);
    // A wrong secret does not verify.
    const other = new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`);
    const first = receiver.at('/all')[0] as ReceivedCallback;
    assert.throws(() => other.verify(first.body, first.headers as Record<string, string>));
  });

  it('retries a failed message with the same webhook-id, and holds the later ones of its notification behind it', async () => {
    receiver.script('/flaky', 500, 503);
    const { id: callbackId, secret } = await register(acme, '/flaky');
    const id = await send(acme);
    await delivered('/flaky', id, 3);
    const got = receiver.at('/flaky').filter((r) => r.body.includes(id));
    const first = got[0] as ReceivedCallback;
    assert.deepEqual(
      got.slice(0, 3).map((r) => [r.headers['webhook-id'], r.status]),
      [
        [first.headers['webhook-id'], 500],
        [first.headers['webhook-id'], 503],
        [first.headers['webhook-id'], 204],
      ],
    );
    // Each attempt is signed afresh (its own timestamp), and every one verifies.
    assert.equal(verified('/flaky', secret, id).length, got.length);
    assert.deepEqual(
      verified('/flaky', secret, id)
        .filter((_, i) => (got[i] as ReceivedCallback).status < 300)
        .map((b) => b.data.status),
      ['PROCESSING', 'SENT', 'DELIVERED'],
    );
    const deliveries = await call(acme, 'GET', `/callbacks/${callbackId}/deliveries?limit=2`);
    assert.equal(deliveries.status, 200);
    assert.equal(deliveries.json.items.length, 2);
    assert.ok(deliveries.json.nextCursor);
    const rest = await call(
      acme,
      'GET',
      `/callbacks/${callbackId}/deliveries?cursor=${deliveries.json.nextCursor}`,
    );
    const attempts = [...deliveries.json.items, ...rest.json.items].reverse();
    assert.deepEqual(
      attempts.slice(0, 3).map((a: { attempt: number; statusCode: number }) => [a.attempt, a.statusCode]),
      [
        [1, 500],
        [2, 503],
        [3, 204],
      ],
    );
  });

  it("holds a slow receiver's messages in its own slots, never another callback's", async () => {
    // Another tenant, so that nothing else here is reported to either path.
    const tenant = await tokenFor(herald.deps, { role: 'admin', tenant: 'slowpoke' });
    receiver.hold('/slow', 8000);
    await register(tenant, '/slow');
    await register(tenant, '/fast');
    const ids = await Promise.all(Array.from({ length: 10 }, () => send(tenant)));
    for (const id of ids) await delivered('/fast', id, 3);
    // Every change reached the fast receiver while the slow one holds only its own slots.
    assert.equal(receiver.at('/fast').length, 30);
    assert.ok(
      receiver.at('/slow').length <= SLOTS,
      `${receiver.at('/slow').length} requests at the slow receiver`,
    );
  });

  it('reports only the statuses asked for', async () => {
    const { secret } = await register(acme, '/final', ['DELIVERED', 'FAILED']);
    const id = await send(acme);
    await delivered('/final', id, 1);
    await delivered('/all', id, 3);
    assert.deepEqual(
      verified('/final', secret, id).map((b) => b.data.status),
      ['DELIVERED'],
    );
  });

  it('disables a callback whose receiver answers 410, and sends it nothing more', async () => {
    receiver.script('/gone', 410);
    const { id: callbackId } = await register(acme, '/gone');
    const first = await send(acme);
    await eventually(async () => {
      const list = await call(acme, 'GET', '/callbacks');
      return list.json.items.some((c: { id: string; enabled: boolean }) => c.id === callbackId && !c.enabled);
    }, 20_000);
    const second = await send(acme);
    await delivered('/all', second, 3);
    assert.equal(receiver.at('/gone').length, 1);
    assert.ok(receiver.at('/gone').every((r) => r.body.includes(first)));
  });

  it('signs with the new secret after a rotation, and with the old one too for a day', async () => {
    const { id: callbackId, secret: old } = await register(acme, '/rotated', ['DELIVERED']);
    const rotated = await call(acme, 'POST', `/callbacks/${callbackId}/rotate-secret`);
    assert.equal(rotated.status, 200);
    assert.notEqual(rotated.json.secret, old);
    const id = await send(acme);
    await delivered('/rotated', id, 1);
    assert.equal(verified('/rotated', rotated.json.secret, id).length, 1);
    assert.equal(verified('/rotated', old, id).length, 1);
  });

  it("keeps tenants apart: no other tenant's changes, callbacks or deliveries", async () => {
    const { id: theirs, secret } = await register(mallory, '/mallory');
    const ours = await send(acme);
    await delivered('/all', ours, 3);
    const own = await send(mallory);
    await delivered('/mallory', own, 3);
    assert.ok(verified('/mallory', secret).every((b) => b.data.notificationId === own));
    const listed = await call(acme, 'GET', '/callbacks');
    assert.ok(listed.json.items.every((c: { id: string }) => c.id !== theirs));
    assert.equal((await call(acme, 'DELETE', `/callbacks/${theirs}`)).status, 404);
    assert.equal((await call(acme, 'POST', `/callbacks/${theirs}/rotate-secret`)).status, 404);
    assert.equal((await call(acme, 'GET', `/callbacks/${theirs}/deliveries`)).status, 404);
    assert.equal((await call(mallory, 'DELETE', `/callbacks/${theirs}`)).status, 204);
  });

  it('caps the callbacks of a tenant (HERALD_CALLBACKS_PER_TENANT, 20): one more gets 409 until one is deleted', async () => {
    const capped = await tokenFor(herald.deps, { role: 'admin', tenant: 'capped' });
    const made = await Promise.all(
      Array.from({ length: 22 }, (_, i) =>
        call(capped, 'POST', '/callbacks', { url: `${receiver.origin}/capped/${i}` }),
      ),
    );
    assert.deepEqual(made.map((r) => r.status).sort(), [...Array<number>(20).fill(201), 409, 409]);
    const refused = made.find((r) => r.status === 409);
    assert.equal(refused?.json.code, 'INVALID_STATE');
    assert.equal((await call(capped, 'GET', '/callbacks')).json.items.length, 20);
    assert.equal((await call(acme, 'POST', '/callbacks', { url: `${receiver.origin}/beside` })).status, 201);
    const first = made.find((r) => r.status === 201)?.json.id;
    assert.equal((await call(capped, 'DELETE', `/callbacks/${first}`)).status, 204);
    assert.equal((await call(capped, 'POST', '/callbacks', { url: `${receiver.origin}/again` })).status, 201);
  });

  it('refuses URLs the outbound rules forbid, with a 400 that changes nothing', async () => {
    for (const url of [
      'http://example.com/hook',
      'https://127.0.0.1:9/hook',
      'https://10.1.2.3/hook',
      'https://user:secret@example.com/hook',
      'not a url',
    ]) {
      const refused = await call(acme, 'POST', '/callbacks', { url });
      assert.equal(refused.status, 400, url);
      assert.equal(refused.json.code, 'VALIDATION_FAILED');
    }
    const sender = await tokenFor(herald.deps, { role: 'sender', tenant: 'acme' });
    assert.equal((await call(sender, 'GET', '/callbacks')).status, 403);
    const listed = await call(acme, 'GET', '/callbacks');
    assert.ok(listed.json.items.every((c: { url: string }) => c.url.startsWith(receiver.origin)));
  });
});
