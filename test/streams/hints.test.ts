// Live streams on SQLite read the status log when the dispatch thread says it committed changes,
// not only at their poll (src/notifications/stream-hub.ts, src/dispatch/thread-entry.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { systemClock } from '../../src/clock.ts';
import { startHerald } from '../../src/main.ts';
import { createStatusHub, type StreamSubscriber } from '../../src/notifications/stream-hub.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { apiCall } from '../helpers/api-call.ts';
import { tokenFor } from '../helpers/auth.ts';
import { tempDir, testConfig } from '../helpers/config.ts';
import { eventually } from '../helpers/eventually.ts';
import { logChange } from '../helpers/status-log.ts';

describe('status-change hints', () => {
  it('make the hub read the log at once: a change reaches a live stream on the hint, its poll an hour away', async () => {
    const store = createSqliteStore(tempDir());
    let hint: () => void = () => undefined;
    const hub = createStatusHub({
      store,
      clock: systemClock,
      log: pino({ level: 'silent' }),
      pollMs: 3_600_000,
      changes: {
        async subscribe(onChange) {
          hint = onChange;
          return async () => undefined;
        },
      },
    });
    const frames: string[] = [];
    const subscriber: StreamSubscriber = {
      tenant: 'acme',
      send: (bytes) => frames.push(bytes.toString()),
      taken: () => undefined,
      closed: false,
    };
    const stop = await hub.subscribe(subscriber);
    try {
      logChange(store, { seq: 1, id: 'n1', tenant: 'acme', status: 'PROCESSING' });
      // Without a hint nothing reads the log for an hour.
      await sleep(300);
      assert.equal(frames.length, 0);
      hint();
      await eventually(() => frames.length === 1, 5000, 'the change after the hint');
      assert.match(frames[0] as string, /"notificationId":"n1"/);
    } finally {
      stop();
      await hub.close();
      await store.close();
    }
  });

  it("come from the dispatch thread for its commits: the new notification's, then its delivery's", async () => {
    const herald = await startHerald(
      testConfig({ HERALD_ROLES: 'auth,api,worker', HERALD_DISPATCH_THREAD: 'true' }),
    );
    try {
      const changes = herald.deps.worker.statusChanges;
      assert.ok(changes, 'a dispatch thread');
      let hints = 0;
      const unsubscribe = await changes.subscribe(() => {
        hints += 1;
      });
      const token = await tokenFor(herald.deps, { role: 'admin', tenant: 'acme' });
      const accepted = await apiCall(herald.apiUrl as string, token, 'POST', '/notifications', {
        channel: 'email',
        recipient: { email: 'someone@example.com' },
        content: { subject: 'Hi', text: 'Hello' },
      });
      assert.equal(accepted.status, 201);
      await eventually(
        async () => {
          const view = await apiCall(
            herald.apiUrl as string,
            token,
            'GET',
            `/notifications/${accepted.json.notificationId}`,
          );
          return view.json.status === 'DELIVERED';
        },
        10_000,
        'delivered',
      );
      // The insert's hint and at least one for the steps (hints closer than 20 ms are joined).
      await eventually(() => hints >= 2, 5000, `two hints (${hints})`);
      await unsubscribe();
    } finally {
      await herald.close();
    }
  });
});
