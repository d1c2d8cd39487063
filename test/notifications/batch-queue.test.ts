// Which waiting batch body a free batch thread reads next (issue 50, decision record 0037): the
// rule itself; test/recipients/batch.test.ts shows it through the API with held threads.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BatchQueue } from '../../src/notifications/batch-queue.ts';

describe('batch queue', () => {
  it('takes notification batches before imports, tenants in turns within each kind', () => {
    const queue = new BatchQueue<string>(2);
    queue.push('recipients', 'a', 'a-import-1');
    queue.push('recipients', 'b', 'b-import-1');
    queue.push('recipients', 'a', 'a-import-2');
    queue.push('notifications', 'a', 'a-batch-1');
    queue.push('notifications', 'a', 'a-batch-2');
    queue.push('notifications', 'b', 'b-batch-1');
    assert.equal(queue.size, 6);
    const taken = Array.from({ length: 6 }, () => queue.next(0));
    assert.deepEqual(taken, [
      'a-batch-1',
      'b-batch-1',
      'a-batch-2',
      'a-import-1',
      'b-import-1',
      'a-import-2',
    ]);
    assert.equal(queue.size, 0);
    assert.equal(queue.next(0), undefined);
  });

  it('keeps one thread from imports, or none when there is one thread', () => {
    const two = new BatchQueue<string>(2);
    two.push('recipients', 'a', 'import');
    assert.equal(two.next(1), undefined, 'one import runs: the other thread stays for notification batches');
    two.push('notifications', 'a', 'batch');
    assert.equal(two.next(1), 'batch');
    assert.equal(two.next(0), 'import');

    const three = new BatchQueue<string>(3);
    for (const n of [1, 2, 3]) three.push('recipients', `t${n}`, `import-${n}`);
    assert.equal(three.next(1), 'import-1');
    assert.equal(three.next(2), undefined);

    const one = new BatchQueue<string>(1);
    one.push('recipients', 'a', 'import');
    one.push('notifications', 'b', 'batch');
    assert.equal(one.next(0), 'batch');
    assert.equal(one.next(0), 'import');
    one.push('recipients', 'a', 'later');
    assert.deepEqual(one.takeAll(), ['later']);
  });
});
