import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ring, Turns } from '../src/turns.ts';

describe('turns', () => {
  it("takes one item of each owner in turn, each owner's in order, and everything on takeAll", () => {
    const turns = new Turns<string>();
    for (const item of ['a1', 'a2', 'a3']) turns.push('a', item);
    turns.push('b', 'b1');
    assert.equal(turns.shift(), 'a1');
    turns.push('c', 'c1');
    turns.push('b', 'b2');
    assert.equal(turns.size, 5);
    assert.deepEqual([turns.shift(), turns.shift(), turns.shift(), turns.shift()], ['b1', 'a2', 'c1', 'b2']);
    turns.push('d', 'd1');
    assert.deepEqual(turns.takeAll().sort(), ['a3', 'd1']);
    assert.equal(turns.size, 0);
    assert.equal(turns.shift(), undefined);
  });

  it('drops an owner with its items and its turn, the others keeping theirs', () => {
    const turns = new Turns<string>();
    for (const [owner, item] of [
      ['a', 'a1'],
      ['b', 'b1'],
      ['a', 'a2'],
      ['c', 'c1'],
    ])
      turns.push(owner as string, item as string);
    turns.delete('a');
    turns.delete('nobody');
    assert.equal(turns.size, 2);
    assert.deepEqual([turns.shift(), turns.shift(), turns.shift()], ['b1', 'c1', undefined]);
    turns.push('a', 'a3');
    assert.equal(turns.shift(), 'a3');
  });
});

describe('ring', () => {
  it('gives each member its turn in order, a newcomer at the back, and keeps the turn when one leaves', () => {
    const ring = new Ring<string>();
    assert.equal(ring.next(), undefined);
    for (const id of ['a', 'b', 'c']) ring.add(id, id);
    assert.deepEqual([ring.next(), ring.next()], ['a', 'b']);
    // c's turn is next: d joins behind a and b, after c.
    ring.add('d', 'd');
    assert.deepEqual([ring.next(), ring.next(), ring.next()], ['c', 'a', 'b']);
    ring.delete('d');
    ring.delete('nobody');
    assert.equal(ring.size, 3);
    assert.deepEqual([ring.next(), ring.next()], ['c', 'a']);
    ring.delete('c');
    assert.deepEqual([ring.next(), ring.next(), ring.next()], ['b', 'a', 'b']);
  });
});
