import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ipv6Groups } from '../src/ipv6.ts';

describe('ipv6Groups', () => {
  it('expands ::, reads a dotted IPv4 tail as two groups and leaves a zone out', () => {
    assert.deepEqual(ipv6Groups('2001:db8:0:1:2:3:4:5'), [0x2001, 0xdb8, 0, 1, 2, 3, 4, 5]);
    assert.deepEqual(ipv6Groups('::'), [0, 0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(ipv6Groups('::1'), [0, 0, 0, 0, 0, 0, 0, 1]);
    assert.deepEqual(ipv6Groups('fe80::'), [0xfe80, 0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(ipv6Groups('::ffff:10.0.0.1'), [0, 0, 0, 0, 0, 0xffff, 0x0a00, 1]);
    assert.deepEqual(ipv6Groups('fe80::1%eth0'), [0xfe80, 0, 0, 0, 0, 0, 0, 1]);
    assert.deepEqual(ipv6Groups('fe80::%eth0'), [0xfe80, 0, 0, 0, 0, 0, 0, 0]);
  });
});
