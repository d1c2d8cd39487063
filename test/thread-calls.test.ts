import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MessageChannel } from 'node:worker_threads';
import { createCalls } from '../src/thread-calls.ts';

describe('calls across a thread port', () => {
  it('keeps no entry for a request that could not be posted, and settles the others', async () => {
    const calls = createCalls();
    const { port1, port2 } = new MessageChannel();
    try {
      // A structured clone of an array nested this deep throws RangeError at postMessage.
      let deep: unknown[] = [];
      for (let i = 0; i < 12_000; i++) deep = [deep];
      await assert.rejects(
        calls.call((id) => port1.postMessage({ id, deep })),
        RangeError,
      );
      assert.equal(calls.pending(), 0, 'the failed post left no call waiting');

      const answered = calls.call<string>((id) => port1.postMessage({ id }));
      assert.equal(calls.pending(), 1);
      const [request] = (await new Promise((resolve) => port2.once('message', (m) => resolve([m])))) as [
        { id: number },
      ];
      calls.settle({ type: 'reply', id: request.id, ok: true, value: 'done' });
      assert.equal(await answered, 'done');
      assert.equal(calls.pending(), 0);
    } finally {
      port1.close();
    }
  });
});
