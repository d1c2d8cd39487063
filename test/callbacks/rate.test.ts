// A callback's rate limit (HERALD_CALLBACK_RATE) holds it back and then lets it go on:
// a callback the limit stopped, with nothing in flight, has no completion to restart it, so the
// sender's pass does. At 1 a second, three messages arrive one by one, none of them twice.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Herald, startHerald } from '../../src/main.ts';
import { tokenFor } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { type CallbackReceiver, startCallbackReceiver } from '../helpers/peers/callback-receiver.ts';

describe('a rate-limited callback', () => {
  let herald: Herald;
  let receiver: CallbackReceiver;
  before(async () => {
    receiver = await startCallbackReceiver();
    herald = await startHerald(
      testConfig({
        HERALD_ROLES: 'auth,api,worker',
        HERALD_CALLBACK_ALLOWED_HOSTS: receiver.host,
        HERALD_CALLBACK_RATE: '1',
      }),
    );
  });
  after(async () => {
    await herald.close();
    await receiver.close();
  });

  it('sends at its rate and resumes by itself after each wait', async () => {
    const token = await tokenFor(herald.deps, { role: 'admin', tenant: 'acme' });
    const post = (path: string, body: object) =>
      fetch(`${herald.apiUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const created = await post('/callbacks', { url: `${receiver.origin}/slow`, events: ['DELIVERED'] });
    assert.equal(created.status, 201);
    for (let i = 0; i < 3; i++) {
      const accepted = await post('/notifications', {
        channel: 'email',
        recipient: { email: `n${i}@example.com` },
        content: { subject: 'Hi', text: 'Hello' },
      });
      assert.equal(accepted.status, 201);
    }
    // Well under the 30 s lease after which a stalled callback's messages would be claimed again.
    await eventually(() => receiver.at('/slow').length >= 3, 20_000, 'three callbacks');
    const at = receiver.at('/slow').map((r) => r.at);
    assert.equal(new Set(receiver.at('/slow').map((r) => r.headers['webhook-id'])).size, 3);
    // One a second: the limit held between them.
    assert.ok(
      (at[2] as number) - (at[0] as number) >= 1500,
      `arrivals ${at.map((t) => t - (at[0] as number))}`,
    );
  });
});
