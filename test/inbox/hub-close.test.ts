// The inbox hub's close (src/inbox/hub.ts) against a stream still starting: the server's close
// ran while the hub's watch of the status log was being set up, which then kept the reader
// running and the process alive (a test file timed out after its last test in a full run).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { systemClock } from '../../src/clock.ts';
import { createInboxHub, type InboxStream } from '../../src/inbox/hub.ts';
import { createStatusHub, type StatusHub } from '../../src/notifications/stream-hub.ts';
import { createSqliteStore } from '../../src/store/sqlite/index.ts';
import { tempDir } from '../helpers/config.ts';

describe('the inbox hub', () => {
  it('ends a stream still starting when it closes, and leaves no watch of the status log', async () => {
    const store = createSqliteStore(tempDir());
    const log = pino({ level: 'silent' });
    const statusHub = createStatusHub({ store, clock: systemClock, log });
    let watching = 0;
    const counted: StatusHub = {
      ...statusHub,
      async watch(watcher) {
        const stop = await statusHub.watch(watcher);
        watching++;
        return () => {
          watching--;
          stop();
        };
      },
    };
    const hub = createInboxHub({
      store,
      clock: systemClock,
      log,
      statusHub: counted,
      heartbeatMs: 15_000,
      tokenEndedComment: ': token expired',
    });
    let ended = false;
    const stream: InboxStream = {
      tenant: 'acme',
      recipientId: 'ada',
      write: () => !ended,
      end: () => {
        ended = true;
      },
      get closed() {
        return ended;
      },
      stillValid: async () => true,
    };
    const starting = hub.subscribe(stream);
    await hub.close();
    const stop = await starting;
    assert.equal(ended, true, 'the stream that was starting has ended');
    assert.equal(watching, 0, 'no watch of the status log is left running');
    stop();
    await statusHub.close();
    await store.close();
  });
});
