// The callback sender reads the log when told that status changes were committed
// (CallbackSender.changed, which the worker calls after its steps), not only at its poll.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { registerCallback, senderPeers, startSender } from '../helpers/callback-sender.ts';
import { eventually } from '../helpers/eventually.ts';
import { logChange } from '../helpers/status-log.ts';

describe('callback sender hints', () => {
  const peers = senderPeers();

  it('sends a change at the hint, its poll an hour away', async () => {
    const { store, receiver } = peers;
    await registerCallback(peers, 'cb_hinted', 'acme');
    // The sender's first pass reads the log to its end as it is then; the change is made after.
    let firstRead: () => void = () => undefined;
    const read = new Promise<void>((resolve) => {
      firstRead = resolve;
    });
    const head = store.statusLog.head.bind(store.statusLog);
    const statusLog = {
      ...store.statusLog,
      compare: store.statusLog.compare.bind(store.statusLog),
      isCursor: store.statusLog.isCursor.bind(store.statusLog),
      read: store.statusLog.read.bind(store.statusLog),
      head: async () => {
        const cursor = await head();
        firstRead();
        return cursor;
      },
    };
    const sender = startSender(peers, { statusLog, pollMs: 3_600_000 });
    try {
      await read;
      logChange(store, { seq: 1, id: 'n1', tenant: 'acme', status: 'DELIVERED' });
      await sleep(300);
      assert.equal(receiver.at('/cb_hinted').length, 0, 'nothing before the hint: the poll is an hour away');
      sender.changed();
      await eventually(() => receiver.at('/cb_hinted').length === 1, 10_000, 'the callback after the hint');
      assert.match(receiver.at('/cb_hinted')[0]?.body ?? '', /"notificationId":"n1"/);
    } finally {
      await sender.close();
    }
  });
});
