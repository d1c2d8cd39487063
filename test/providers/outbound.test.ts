// The outbound rules (API.md §7) on address literals: what a caller-chosen URL may name.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPrivateAddress, refusedUrl } from '../../src/providers/outbound.ts';

describe('outbound rules', () => {
  it('refuses the IPv6 forms of a private IPv4 address and lets those of a public one through', () => {
    for (const [address, refused] of [
      ['::ffff:10.0.0.1', true],
      ['::ffff:a00:1', true],
      ['::10.0.0.1', true],
      ['::', true],
      ['::1', true],
      ['64:ff9b::192.168.1.1', true],
      ['64:ff9b::c0a8:101', true],
      ['2002:7f00:1::', true],
      ['::ffff:8.8.8.8', false],
      ['64:ff9b::8.8.8.8', false],
      ['2002:808:808::1', false],
      ['2606:4700::1111', false],
    ] as const) {
      assert.equal(isPrivateAddress(address), refused, address);
    }
  });

  it('refuses ranges that are not public, and credentials in the URL', () => {
    for (const url of [
      'https://100.64.0.1/',
      'https://192.0.0.8/',
      'https://198.19.255.1/',
      'https://239.1.1.1/',
      'https://250.0.0.1/',
      'https://[ff05::2]/',
      'https://[64:ff9b:1::a]/',
      'https://user@example.com/',
      'https://:secret@example.com/',
    ]) {
      assert.ok(refusedUrl(url, []), url);
    }
    assert.equal(refusedUrl('https://93.184.215.14/hook', []), undefined);
    assert.equal(refusedUrl('https://example.com/hook', []), undefined);
  });
});
