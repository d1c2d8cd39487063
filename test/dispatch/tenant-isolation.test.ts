// Per-message failures never hold a provider (API.md §5), end to end, on either database: a real
// Herald (API and worker in one process), the sandbox for email and two real Web Push services. What tenant
// "mallory" sends (the sandbox's fail-config address, pushes its push service refuses with 401,
// pushes to a push service that is down) must not hold back tenant "acme"'s CRITICAL: acme's
// notifications reach their provider with no THROTTLED event. Latency is printed, not asserted.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import webpush from 'web-push';
import { type Herald, startHerald } from '../../src/main.ts';
import { authHeader } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { startWebPushPeer, type WebPushPeer } from '../helpers/peers/webpush.ts';
import { sharedPostgres, stopSharedPostgres } from '../helpers/postgres.ts';

interface Shown {
  status: string;
  createdAt: string;
  events: Array<{ type: string; detail?: string; at: string }>;
}

const SETTLED = ['SENT', 'DELIVERED', 'FAILED'];

for (const kind of ['sqlite', 'postgres'] as const)
  describe(`one tenant's failing messages do not hold back another tenant's CRITICAL (${kind})`, () => {
    let herald: Herald;
    let acme: { authorization: string };
    let mallory: { authorization: string };
    let pushA: WebPushPeer;
    let pushB: WebPushPeer;
    const vapid = webpush.generateVAPIDKeys();
    before(async () => {
      pushA = await startWebPushPeer();
      pushB = await startWebPushPeer();
      const database =
        kind === 'postgres'
          ? { DATABASE_URL: await (await sharedPostgres()).createDatabase('herald_tenant_isolation') }
          : {};
      herald = await startHerald(
        testConfig({
          ...database,
          HERALD_ROLES: 'auth,api,worker',
          VAPID_PUBLIC_KEY: vapid.publicKey,
          VAPID_PRIVATE_KEY: vapid.privateKey,
          VAPID_SUBJECT: 'mailto:ops@example.com',
          HERALD_PUSH_ALLOWED_HOSTS: `${new URL(pushA.origin).host},${new URL(pushB.origin).host}`,
        }),
      );
      acme = await authHeader(herald.deps, { role: 'sender', tenant: 'acme' });
      mallory = await authHeader(herald.deps, { role: 'sender', tenant: 'mallory' });
    });
    after(async () => {
      await herald.close();
      await Promise.all([pushA.close(), pushB.close()]);
      if (kind === 'postgres') await stopSharedPostgres();
    });

    const api = () => herald.api as NonNullable<Herald['api']>;

    async function post(headers: { authorization: string }, body: object): Promise<string> {
      const response = await api().inject({ method: 'POST', url: '/notifications', headers, payload: body });
      assert.equal(response.statusCode, 201, response.body);
      return response.json().notificationId;
    }

    async function show(headers: { authorization: string }, id: string): Promise<Shown> {
      const response = await api().inject({ method: 'GET', url: `/notifications/${id}`, headers });
      assert.equal(response.statusCode, 200, response.body);
      return response.json();
    }

    /** Waits until each notification has settled; returns how they ended. */
    async function settled(headers: { authorization: string }, ids: string[]): Promise<Shown[]> {
      const shown = new Map<string, Shown>();
      await eventually(
        async () => {
          for (const id of ids) shown.set(id, await show(headers, id));
          return [...shown.values()].every((n) => SETTLED.includes(n.status));
        },
        15_000,
        `${ids.length} notifications settled`,
      );
      return ids.map((id) => shown.get(id) as Shown);
    }

    /** Acme's CRITICAL reached its provider once, never held (no THROTTLED); the waits, in ms. */
    function neverHeld(shown: Shown[]): number[] {
      return shown.map((n) => {
        assert.ok(['SENT', 'DELIVERED'].includes(n.status), `acme's CRITICAL ended ${n.status}`);
        assert.deepEqual(
          n.events.filter((e) => e.type === 'THROTTLED'),
          [],
          "acme's CRITICAL was never held",
        );
        const processing = n.events.find((e) => e.type === 'PROCESSING');
        const waited = Date.parse(processing?.at ?? '') - Date.parse(n.createdAt);
        assert.ok(waited >= 0, `PROCESSING dated ${-waited} ms before createdAt`);
        return waited;
      });
    }

    const criticalEmail = (to: string) => ({
      channel: 'email',
      priority: 'CRITICAL',
      recipient: { email: to },
      content: { subject: 'Your code', text: '123456' },
    });
    const criticalPush = (subscription: object) => ({
      channel: 'push',
      priority: 'CRITICAL',
      recipient: { subscription },
      content: { title: 'Alert', body: 'now' },
    });

    it("the sandbox's fail-config address pauses nothing by default", async (t) => {
      assert.equal(herald.deps.config.providers.sandboxFailures, false);
      const bait = await Promise.all(
        Array.from({ length: 3 }, () => post(mallory, criticalEmail('fail-config@example.com'))),
      );
      const ours = await Promise.all(
        Array.from({ length: 3 }, (_, i) => post(acme, criticalEmail(`ada${i}@example.com`))),
      );
      t.diagnostic(`acme CRITICAL email, 201 to PROCESSING, ms: ${neverHeld(await settled(acme, ours))}`);
      // Failure injection is off: the address is an ordinary one.
      for (const n of await settled(mallory, bait)) assert.equal(n.status, 'DELIVERED');
    });

    it("a push service's 401 for one tenant's subscription fails that notification only", async (t) => {
      const refused = pushA.subscribe(vapid.publicKey);
      pushA.script(refused.endpoint, ...Array.from({ length: 10 }, () => ({ status: 401 })));
      const bait = await Promise.all(Array.from({ length: 10 }, () => post(mallory, criticalPush(refused))));
      const failed = await settled(mallory, bait);
      for (const n of failed) {
        assert.equal(n.status, 'FAILED');
        assert.deepEqual(
          n.events.filter((e) => e.type === 'THROTTLED'),
          [],
        );
      }
      // Ten refusals, twice the circuit's threshold: the push service is still open to acme.
      const ours = await Promise.all(
        Array.from({ length: 3 }, () => post(acme, criticalPush(pushA.subscribe(vapid.publicKey)))),
      );
      t.diagnostic(
        `acme CRITICAL push after 401s, 201 to PROCESSING, ms: ${neverHeld(await settled(acme, ours))}`,
      );
      assert.equal(pushA.received.length, 3);
    });

    it('a push service that is down holds only its own notifications, not those for another', async (t) => {
      const down = pushB.subscribe(vapid.publicKey);
      pushB.script(down.endpoint, ...Array.from({ length: 50 }, () => ({ status: 503 })));
      const bait = await Promise.all(Array.from({ length: 8 }, () => post(mallory, criticalPush(down))));
      // Five failures in a row open that push service's circuit: later sends to it are held.
      await eventually(
        async () =>
          (await Promise.all(bait.map((id) => show(mallory, id)))).some((n) =>
            n.events.some((e) => e.type === 'THROTTLED'),
          ),
        15_000,
        'the circuit of the push service that is down opened',
      );
      const ours = await Promise.all(
        Array.from({ length: 3 }, () => post(acme, criticalPush(pushA.subscribe(vapid.publicKey)))),
      );
      t.diagnostic(
        `acme CRITICAL push, other service's circuit open, 201 to PROCESSING, ms: ${neverHeld(await settled(acme, ours))}`,
      );
    });
  });
