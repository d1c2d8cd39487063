// A push to a person (docs/sending-to-people.md) goes to every push target of the profile in one attempt, against
// a real Web Push service: one target accepts, one is gone (410), which leaves the profile and is
// suppressed with the completion; each failed target is named, masked, in its own event.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import webpush from 'web-push';
import { createWebPushProvider } from '../../src/providers/push/index.ts';
import { schedulerFor, settle, setup, storeKinds } from '../dispatch/harness.ts';
import { startWebPushPeer } from '../helpers/peers/webpush.ts';
import { allowing } from '../providers/push/factories.ts';
import { newNotification, read, seedMany } from '../store/queue-fixtures.ts';

for (const kind of storeKinds()) {
  describe(`push to a person's every target (${kind})`, () => {
    const closers: Array<() => Promise<void>> = [];
    after(async () => {
      for (const close of closers.reverse()) await close();
    });

    it('sends to each target, removes and suppresses the gone one, and names it in its event', async () => {
      const peer = await startWebPushPeer();
      closers.push(() => peer.close());
      const vapid = webpush.generateVAPIDKeys();
      const kept = peer.subscribe(vapid.publicKey);
      const gone = peer.subscribe(vapid.publicKey);
      peer.script(gone.endpoint, { status: 410, body: 'gone' });
      const env = await setup(kind);
      closers.push(() => env.store.close());
      env.clock.set(Date.now());
      const config = { ...vapid, subject: 'mailto:ops@example.com' };
      const scheduler = schedulerFor(env, {
        factories: [(deps) => createWebPushProvider(config, allowing(deps, peer.origin))],
      });
      await env.store.recipients.put(
        't1',
        [{ id: 'ada', profile: { name: 'Ada', push: [{ subscription: gone }, { subscription: kept }] } }],
        env.clock.now(),
      );
      const [id] = await seedMany(env.store, [
        newNotification({
          channel: 'push',
          recipient: { id: 'ada' },
          content: { title: 'Hi {{ recipient.name }}', body: 'b' },
          createdAt: env.clock.now(),
        }),
      ]);
      await settle(scheduler);
      const { record, events } = await read(env.store, id as string);
      assert.equal(record.status, 'SENT', JSON.stringify(events));
      assert.equal(peer.received.length, 1);
      assert.equal(JSON.parse(peer.received[0]?.plaintext ?? '{}').title, 'Hi Ada');
      const tail = (endpoint: string) => endpoint.slice(-6);
      const failed = events.find((e) => e.type === 'ATTEMPT_FAILED');
      assert.match(
        failed?.detail ?? '',
        new RegExp(
          `^push target \\*\\*\\*${tail(gone.endpoint)}: .*410.*removed from the profile and suppressed$`,
        ),
      );
      assert.equal(events.at(-1)?.type, 'SENT');
      assert.equal(events.at(-1)?.detail, `sent to push target ***${tail(kept.endpoint)}`);
      const profile = (await env.store.recipients.get('t1', 'ada'))?.profile;
      assert.deepEqual(profile?.push, [{ subscription: kept }]);
      const suppressed = await env.store.suppressions.list('t1', { limit: 10 });
      assert.deepEqual(
        suppressed.items.map((s) => [s.channel, s.recipient, s.reason]),
        [['push', gone.endpoint, 'unregistered']],
      );
    });
  });
}
