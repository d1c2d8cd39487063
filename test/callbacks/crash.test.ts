// `kill -9` right after a status change (API.md §10: a status change and its callback messages
// are committed together): a real `herald start` process on SQLite is killed the moment the
// DELIVERED event is in its database (read every millisecond from outside, so usually before the
// callback sender has sent it and moved its place in the log past it), then restarted on the same
// data directory; the callback for that change still reaches the receiver, signed.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { Webhook } from 'standardwebhooks';
import { tempDir } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import {
  type HeraldProcess,
  oneProcessEnv,
  passwordLogin,
  startHeraldProcess,
} from '../helpers/herald-process.ts';
import { type CallbackReceiver, startCallbackReceiver } from '../helpers/peers/callback-receiver.ts';

const ADMIN = { email: 'admin@example.com', password: 'crash-test-password-1' };

describe('callbacks across a crash', () => {
  let proc: HeraldProcess | undefined;
  let receiver: CallbackReceiver | undefined;
  after(async () => {
    await proc?.stop(2000);
    await receiver?.close();
  });

  it('delivers the callback of a change committed just before a kill -9, after the restart', async () => {
    receiver = await startCallbackReceiver();
    const dataDir = tempDir('herald-callback-crash-');
    const env = oneProcessEnv(dataDir, ADMIN, { HERALD_CALLBACK_ALLOWED_HOSTS: receiver.host });
    proc = await startHeraldProcess('crash-1', env);
    const api = proc.apiUrl as string;
    const token = await passwordLogin(api, ADMIN);
    const call = (path: string, body: object) =>
      fetch(`${api}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const hook = await call('/callbacks', { url: `${receiver.origin}/crash`, events: ['DELIVERED'] });
    assert.equal(hook.status, 201);
    const { secret } = (await hook.json()) as { secret: string };
    const accepted = await call('/notifications', {
      channel: 'email',
      recipient: { email: 'ada@example.com' },
      content: { subject: 'Hi', text: 'Hello' },
    });
    const { notificationId } = (await accepted.json()) as { notificationId: string };
    const db = new Database(join(dataDir, 'herald.db'), { readonly: true, fileMustExist: true });
    const delivered = db
      .prepare(`SELECT 1 FROM notification_events e JOIN notifications n ON n.seq = e.notification_seq
                 WHERE n.id = ? AND e.type = 'DELIVERED'`)
      .pluck();
    const place = db.prepare('SELECT cursor FROM callbacks').pluck();
    const eventId = db
      .prepare(`SELECT e.id FROM notification_events e JOIN notifications n ON n.seq = e.notification_seq
                 WHERE n.id = ? AND e.type = 'DELIVERED'`)
      .pluck();
    await eventually(() => delivered.get(notificationId) !== undefined, 15_000, 'DELIVERED in the database');
    proc.child.kill('SIGKILL');
    await proc.exited;
    const passed = Number(place.get()) >= (eventId.get(notificationId) as number);
    db.close();
    const beforeRestart = receiver.at('/crash').length;

    proc = await startHeraldProcess('crash-2', { ...env, HERALD_API_PORT: '0' });
    const hub = receiver;
    await eventually(
      () => hub.at('/crash').some((r) => r.body.includes(notificationId)),
      20_000,
      'the callback',
    );
    const got = receiver
      .at('/crash')
      .map((r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>));
    assert.ok(got.length >= 1);
    for (const body of got) {
      assert.deepEqual((body as { data: { notificationId: string; status: string } }).data, {
        ...(body as { data: object }).data,
        notificationId,
        status: 'DELIVERED',
      });
    }
    // Printed, not asserted: whether the kill landed before the callback's place in the log moved
    // past the change (the case this is about).
    console.log(`# at the kill: place ${passed ? 'past' : 'before'} the change, ${beforeRestart} received`);
  });
});
