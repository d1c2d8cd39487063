// The outbound rules (API.md §7): what a caller-chosen URL may name, and where its connections go.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import type { LookupAddress } from 'node:dns';
import { Resolver, lookup as systemLookup } from 'node:dns/promises';
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { hostsFileAddresses } from '../../src/providers/hosts-file.ts';
import {
  createPublicOnlyLookup,
  isPrivateAddress,
  PRIVATE_ADDRESS,
  refusedUrl,
} from '../../src/providers/outbound.ts';
import { tempDir } from '../helpers/config.ts';

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
      // A fully qualified name (trailing dot) is the same host.
      'https://localhost./',
      'https://app.localhost./',
      'https://127.0.0.1./',
    ]) {
      assert.ok(refusedUrl(url, []), url);
    }
    assert.equal(refusedUrl('https://93.184.215.14/hook', []), undefined);
    assert.equal(refusedUrl('https://example.com/hook', []), undefined);
    assert.equal(refusedUrl('https://example.com./hook', []), undefined);
    assert.equal(
      refusedUrl('https://localhost.:8443/', ['localhost:8443']),
      undefined,
      'listed without the dot',
    );
  });
});

/**
 * A DNS server on UDP for the tests: `public.herald.test` has an A record of a public address,
 * `private.herald.test` one of a private address, `slow.herald.test` gets no answer at all (as
 * from a server that drops the query), any other name NXDOMAIN.
 */
async function dnsServer(): Promise<{ server: string; asked: () => string[]; close: () => void }> {
  const socket = createSocket('udp4');
  const asked: string[] = [];
  const records: Record<string, [number, number, number, number]> = {
    'public.herald.test': [93, 184, 215, 14],
    'private.herald.test': [10, 0, 0, 7],
  };
  socket.on('message', (query, peer) => {
    const labels: string[] = [];
    let at = 12;
    while ((query[at] ?? 0) > 0) {
      const length = query[at] as number;
      labels.push(query.subarray(at + 1, at + 1 + length).toString());
      at += length + 1;
    }
    const name = labels.join('.').toLowerCase();
    const type = query.readUInt16BE(at + 1);
    asked.push(name);
    if (name === 'slow.herald.test') return;
    const question = query.subarray(12, at + 5);
    const address = records[name];
    const answer =
      address && type === 1
        ? Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, ...address])
        : Buffer.alloc(0);
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(0x8180 | (address ? 0 : 3), 2); // a response; NXDOMAIN for unknown names
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answer.length > 0 ? 1 : 0, 6);
    socket.send(Buffer.concat([header, question, answer]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    server: `127.0.0.1:${socket.address().port}`,
    asked: () => asked,
    close: () => socket.close(),
  };
}

describe('the lookup of connections to caller-chosen hosts', () => {
  const lookupWith = (server: string) => {
    const resolver = new Resolver({ timeout: 1000, tries: 1 });
    resolver.setServers([server]);
    const lookup = createPublicOnlyLookup(resolver);
    return (host: string) =>
      new Promise<{ error?: NodeJS.ErrnoException; addresses?: LookupAddress[] }>((resolve) =>
        lookup(host, { all: true }, (error, addresses) =>
          resolve(error ? { error } : { addresses: addresses as unknown as LookupAddress[] }),
        ),
      );
  };

  it('reads the hosts file first, then asks DNS itself, and refuses private answers', async () => {
    const dns = await dnsServer();
    try {
      const lookup = lookupWith(dns.server);
      assert.deepEqual((await lookup('public.herald.test')).addresses, [
        { address: '93.184.215.14', family: 4 },
      ]);
      assert.equal((await lookup('private.herald.test')).error?.code, PRIVATE_ADDRESS);
      assert.equal((await lookup('nowhere.herald.test')).error?.code, 'ENOTFOUND');
      // The hosts file answers first (loopback: refused), without a DNS query.
      assert.equal((await lookup('localhost')).error?.code, PRIVATE_ADDRESS);
      assert.ok(dns.asked().includes('public.herald.test'));
      assert.ok(!dns.asked().includes('localhost'));
    } finally {
      dns.close();
    }
  });

  it('lets a host whose DNS never answers hold up only its own connections, not the thread pool lookups share', async () => {
    const dns = await dnsServer();
    try {
      const lookup = lookupWith(dns.server);
      let settled = 0;
      const hanging = Array.from({ length: 8 }, () =>
        lookup('slow.herald.test').finally(() => {
          settled += 1;
        }),
      );
      // The system's lookups (libuv's pool runs at most two at once) are not queued behind them.
      for (let i = 0; i < 4; i++) await systemLookup('localhost');
      assert.equal(settled, 0, 'the unanswered lookups were still waiting for DNS');
      for (const result of await Promise.all(hanging)) {
        assert.equal(result.error?.code, 'ETIMEOUT');
      }
      assert.ok(dns.asked().filter((name) => name === 'slow.herald.test').length >= 8);
    } finally {
      dns.close();
    }
  });
});

describe('the hosts file', () => {
  it('gives each name its addresses, comments and blank lines aside, and sees an edit', async () => {
    const path = join(tempDir(), 'hosts');
    writeFileSync(
      path,
      '# a comment\n\n127.0.0.1 localhost\n10.1.2.3  Intranet.example  wiki # the wiki\n::1 localhost\n',
    );
    assert.deepEqual(hostsFileAddresses('localhost', path), [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
    assert.deepEqual(hostsFileAddresses('intranet.EXAMPLE', path), [{ address: '10.1.2.3', family: 4 }]);
    assert.deepEqual(hostsFileAddresses('the', path), []);
    assert.deepEqual(hostsFileAddresses('missing', join(tempDir(), 'none')), []);
    writeFileSync(path, '10.9.9.9 wiki\n');
    utimesSync(path, new Date(), new Date(Date.now() + 5000));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.deepEqual(hostsFileAddresses('wiki', path), [{ address: '10.9.9.9', family: 4 }]);
  });
});
