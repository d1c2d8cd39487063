// A callback's head (src/callbacks/head.ts): the order rule for messages read from the status log
// and not yet recorded, and what its settled front records. The sender and the stores around it
// are covered end to end in callbacks.test.ts, crash.test.ts and the store suites.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHead } from '../../src/callbacks/head.ts';
import type { LogMessage } from '../../src/callbacks/message.ts';
import type { FinishedAttempt, LeasedMessage, MessageOutcome } from '../../src/store/port/callbacks.ts';

const T0 = 1_700_000_000_000;

/** Log row `n` (cursor `n`), a change of notification `notification`. */
const logged = (n: number, notification: string): LogMessage => ({
  cursor: String(n),
  message: {
    id: `m${n}`,
    callbackId: 'cb1',
    notificationId: notification,
    body: `{"n":${n}}`,
    attempt: 1,
    createdAt: T0 + n,
  },
});

const ended = (
  message: LeasedMessage,
  outcome: MessageOutcome,
  statusCode: number | null,
): FinishedAttempt => ({
  message,
  outcome,
  statusCode,
  error: null,
});

/** Takes every ready message, by id. */
function takeAll(head: ReturnType<typeof createHead>): Map<string, LeasedMessage> {
  const taken = new Map<string, LeasedMessage>();
  for (let m = head.take(); m; m = head.take()) taken.set(m.id, m);
  return taken;
}

describe('callback head', () => {
  it("sends a notification's messages one at a time, in log order", () => {
    const head = createHead('cb1', '0');
    head.add([logged(1, 'A'), logged(2, 'B'), logged(3, 'A'), logged(4, 'A')], '5', new Set());
    let sent = takeAll(head);
    assert.deepEqual([...sent.keys()], ['m1', 'm2']);
    head.finish(
      sent.get('m1') as LeasedMessage,
      ended(sent.get('m1') as LeasedMessage, { kind: 'delivered' }, 204),
    );
    sent = takeAll(head);
    assert.deepEqual([...sent.keys()], ['m3']);
    // A message given up (not retried) does not hold the next one back.
    head.finish(
      sent.get('m3') as LeasedMessage,
      ended(sent.get('m3') as LeasedMessage, { kind: 'failed' }, null),
    );
    assert.deepEqual([...takeAll(head).keys()], ['m4']);
  });

  it('moves the place over the settled front only, recording its attempts', () => {
    const head = createHead('cb1', '0');
    head.add([logged(1, 'A'), logged(2, 'B'), logged(3, 'C')], '7', new Set());
    const sent = takeAll(head);
    const finish = (id: string) =>
      head.finish(
        sent.get(id) as LeasedMessage,
        ended(sent.get(id) as LeasedMessage, { kind: 'delivered' }, 200),
      );
    finish('m2');
    assert.equal(head.settled(T0), undefined, 'm1 is still sending');
    finish('m1');
    const front = head.settled(T0);
    assert.equal(front?.to, '2');
    assert.deepEqual(
      front?.progress.attempts.map((a) => [a.messageId, a.attempt, a.statusCode]),
      [
        ['m1', 1, 200],
        ['m2', 1, 200],
      ],
    );
    assert.deepEqual(front?.progress.waiting, []);
    head.recorded(front as NonNullable<typeof front>);
    assert.equal(head.cursor, '2');
    finish('m3');
    // Every message read is settled: the place moves to where the log was read (rows 4 to 7 were
    // other tenants' or statuses this callback does not report).
    const rest = head.settled(T0);
    assert.equal(rest?.to, '7');
    head.recorded(rest as NonNullable<typeof rest>);
    assert.equal(head.size(), 0);
    assert.equal(head.settled(T0), undefined, 'nothing more to record');
  });

  it('sends a failed message to the outbox for its retry, with every later one of its notification behind it', () => {
    const head = createHead('cb1', '0');
    head.add([logged(1, 'A'), logged(2, 'A'), logged(3, 'B')], '3', new Set());
    const sent = takeAll(head);
    assert.deepEqual([...sent.keys()], ['m1', 'm3']);
    const m1 = sent.get('m1') as LeasedMessage;
    head.finish(m1, ended(m1, { kind: 'retry', retryAt: T0 + 1000 }, 503));
    // m2 never goes out from the head; a later read of A waits too.
    assert.deepEqual([...takeAll(head).keys()], []);
    head.add([logged(4, 'A')], '4', new Set());
    assert.deepEqual([...takeAll(head).keys()], []);
    const m3 = sent.get('m3') as LeasedMessage;
    head.finish(m3, ended(m3, { kind: 'delivered' }, 204));
    const front = head.settled(T0 + 5);
    assert.equal(front?.to, '4');
    assert.deepEqual(
      front?.progress.waiting.map((w) => [w.id, w.attempts, w.dueAt, w.body]),
      [
        ['m1', 1, T0 + 1000, '{"n":1}'],
        ['m2', 0, T0 + 5, '{"n":2}'],
        ['m4', 0, T0 + 5, '{"n":4}'],
      ],
    );
    assert.deepEqual(
      front?.progress.attempts.map((a) => [a.messageId, a.statusCode]),
      [
        ['m1', 503],
        ['m3', 204],
      ],
    );
  });

  it('holds back the messages of a notification that already waits in the outbox', () => {
    const head = createHead('cb1', '0');
    head.add([logged(1, 'A'), logged(2, 'B'), logged(3, 'A')], '3', new Set(['A']));
    assert.deepEqual([...takeAll(head).keys()], ['m2']);
    // A message held is settled at once (into the outbox), so it never holds the place back.
    const front = head.settled(T0);
    assert.equal(front?.to, '1');
    assert.deepEqual(
      front?.progress.waiting.map((w) => w.id),
      ['m1'],
    );
  });
});
