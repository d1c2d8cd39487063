// The dispatch thread ending on its own (docs/dispatch.md, "Shutdown and crashes"): the process
// can no longer commit or deliver, so it exits with code 1 for its supervisor to restart it, and
// what it had acknowledged is delivered after the restart. The thread is ended from outside, as
// a crash would end it, through Node's inspector: the test attaches to the running process's
// dispatch thread and calls process.exit() in it (which ends that thread only).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { tempDir } from '../helpers/config.ts';
import { endThread } from '../helpers/end-thread.ts';
import { eventually } from '../helpers/eventually.ts';
import {
  type HeraldProcess,
  oneProcessEnv,
  passwordLogin,
  startHeraldProcess,
} from '../helpers/herald-process.ts';

const ADMIN = { email: 'admin@example.com', password: 'thread-exit-password-1' };

describe('the dispatch thread ending on its own', () => {
  const dataDir = tempDir('herald-thread-exit-');
  const env = oneProcessEnv(dataDir, ADMIN);
  let proc: HeraldProcess | undefined;
  after(async () => {
    await proc?.stop(2000);
  });

  it('stops the process with code 1, and a restart delivers what was acknowledged', async () => {
    proc = await startHeraldProcess('herald', { ...env, NODE_OPTIONS: '--inspect=127.0.0.1:0' });
    const api = proc.apiUrl as string;
    const token = await passwordLogin(api, ADMIN);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const accepted = await fetch(`${api}/notifications`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        channel: 'email',
        priority: 'NORMAL',
        recipient: { email: 'someone@example.com' },
        content: { subject: 'Hello', text: 'Hi' },
        // Not before the restart: acknowledged now, delivered by the next process.
        scheduledAt: new Date(Date.now() + 4000).toISOString(),
      }),
    });
    assert.equal(accepted.status, 201);
    const { notificationId } = (await accepted.json()) as { notificationId: string };

    const inspector = /Debugger listening on (ws:\/\/\S+)/.exec(proc.output())?.[1];
    assert.ok(inspector, `no inspector URL in: ${proc.output()}`);
    await endThread(inspector, '/dispatch/thread-entry.js');
    const ended = await Promise.race([
      proc.exited,
      new Promise((resolve) => setTimeout(() => resolve('still running after 15 s'), 15_000).unref()),
    ]);
    assert.equal(ended, 1);
    assert.match(proc.output(), /the dispatch thread ended \(exit code 7\); stopping/);

    proc = await startHeraldProcess('herald-again', env);
    const again = proc.apiUrl as string;
    await eventually(
      async () => {
        const view = await fetch(`${again}/notifications/${notificationId}`, { headers });
        const { status } = (await view.json()) as { status: string };
        return status === 'DELIVERED' || status === 'SENT';
      },
      30_000,
      'the acknowledged notification delivered after the restart',
    );
  });
});
