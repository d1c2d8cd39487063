// Closing Herald lets go of every live status stream, also one whose reader stopped reading: its
// heartbeat timer and its subscription must not keep the process alive (a test process that
// never exited once did, in CI).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { App } from '../../src/http/types.ts';
import { startHerald } from '../../src/main.ts';
import { tokenFor } from '../helpers/auth.ts';
import { testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';

/** Timers that keep this process alive. */
const heldTimers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

describe('closing Herald with a live status stream open', () => {
  it('ends the stream and stops its heartbeat even though its reader stopped reading', async () => {
    const before = heldTimers();
    const herald = await startHerald(testConfig({ HERALD_ROLES: 'auth,api,worker' }));
    const api = herald.api as App;
    const token = await tokenFor(herald.deps, { role: 'sender', tenant: 'acme' });
    const headers = { authorization: `Bearer ${token}` };
    const open = () =>
      api.inject({ method: 'GET', url: '/notifications/stream', headers, payloadAsStream: true });
    const gone = await open();
    assert.equal(gone.statusCode, 200);
    // The reader goes away without the server hearing of it: what is written to it from now on
    // is never read, so the stream's own end is never read either.
    gone.stream().destroy();
    // A reader that reads, to see when the status changes have been written to both streams.
    let seen = '';
    const reading = await open();
    reading.stream().on('data', (chunk: Buffer) => {
      seen += chunk.toString();
    });

    const sent = await api.inject({
      method: 'POST',
      url: '/notifications',
      headers,
      payload: {
        channel: 'email',
        recipient: { email: 'someone@example.com' },
        content: { subject: 'Hi', text: 'Hello' },
      },
    });
    assert.equal(sent.statusCode, 201);
    // Its status changes are written to both streams; nobody reads the first.
    await eventually(
      () => seen.includes(`"notificationId":"${sent.json().notificationId}","status":"DELIVERED"`),
      15_000,
      'DELIVERED on the stream read',
    );

    await herald.close();
    // A timer that is about to fire (a throttle's) may still be there; the heartbeat never goes.
    await eventually(
      () => heldTimers() === before,
      10_000,
      'no timer of the closed Herald holding the process',
    );
  });
});
