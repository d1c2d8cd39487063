// The outbound rules (API.md §7): what a caller-chosen URL may name, and where its connections go.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import type { LookupAddress } from 'node:dns';
import { Resolver, lookup as systemLookup } from 'node:dns/promises';
import { utimesSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Agent, fetch } from 'undici';
import { hostsFileAddresses } from '../../src/providers/hosts-file.ts';
import { isPrivateAddress, refusedUrl } from '../../src/providers/outbound.ts';
import {
  createPublicOnlyConnector,
  createPublicOnlyLookup,
  PRIVATE_ADDRESS,
  refusedAtConnect,
} from '../../src/providers/outbound-connect.ts';
import { tempDir } from '../helpers/config.ts';
import { peerTls } from '../helpers/peers/webpush.ts';

/**
 * IANA's special-purpose address registries (iana-ipv4-special-registry and
 * iana-ipv6-special-registry, 2025), the deprecated site-local block and multicast of both
 * families: none is a place Herald calls on a caller's behalf. Written out here, not taken from
 * the library the rule uses, so a version of it that stopped naming one fails this test.
 */
const SPECIAL_V4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.0.0/29',
  '192.0.0.8/32',
  '192.0.0.9/32',
  '192.0.0.10/32',
  '192.0.0.170/32',
  '192.0.0.171/32',
  '192.0.2.0/24',
  '192.31.196.0/24',
  '192.52.193.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '192.175.48.0/24',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '255.255.255.255/32',
];
const SPECIAL_V6 = [
  '::1/128',
  '::/128',
  '64:ff9b:1::/48',
  '100::/64',
  '2001::/23',
  '2001:1::1/128',
  '2001:1::2/128',
  '2001:1::3/128',
  '2001:2::/48',
  '2001:3::/32',
  '2001:4:112::/48',
  '2001:10::/28',
  '2001:20::/28',
  '2001:30::/28',
  '2001:db8::/32',
  '2620:4f:8000::/48',
  '3fff::/20',
  '5f00::/16',
  'fc00::/7',
  'fe80::/10',
  'fec0::/10',
  'ff00::/8',
];
/**
 * The registries' IPv6 ranges that carry an IPv4 address where the packets go: judged by it. Each
 * with an address of the range carrying a public IPv4 address (allowed) and private ones (refused).
 */
const CARRYING_V6: { range: string; publicOne: string; privateOnes: string[] }[] = [
  { range: '::ffff:0:0/96', publicOne: '::ffff:8.8.8.8', privateOnes: ['::ffff:10.0.0.1', '::ffff:a00:1'] },
  { range: '::ffff:0:0:0/96', publicOne: '::ffff:0:8.8.8.8', privateOnes: ['::ffff:0:192.168.1.1'] },
  {
    range: '64:ff9b::/96',
    publicOne: '64:ff9b::8.8.8.8',
    privateOnes: ['64:ff9b::192.168.1.1', '64:ff9b::c0a8:101', '64:ff9b::127.0.0.1'],
  },
  { range: '2002::/16', publicOne: '2002:808:808::1', privateOnes: ['2002:7f00:1::', '2002:a9fe:a9fe::1'] },
  // Teredo: server 8.8.8.8, client 1.1.1.1 (its bits inverted); then a private client, a private server.
  {
    range: '2001::/32',
    publicOne: '2001:0:808:808::fefe:fefe',
    privateOnes: ['2001:0:808:808::f5ff:fffe', '2001:0:a00:1::fefe:fefe'],
  },
];

/** The first, a middle and the last address of a CIDR range, as literals. */
function firstMiddleLast(cidr: string): string[] {
  const [base = '', bits = ''] = cidr.split('/');
  const v6 = base.includes(':');
  const width = v6 ? 128n : 32n;
  const size = 1n << (width - BigInt(bits));
  let first = 0n;
  if (v6) {
    const [head = '', tail = ''] = base.split('::');
    const groups = (text: string) => (text ? text.split(':') : []);
    const all = [
      ...groups(head),
      ...Array(8 - groups(head).length - groups(tail).length).fill('0'),
      ...groups(tail),
    ];
    for (const g of all) first = (first << 16n) | BigInt(Number.parseInt(g, 16));
  } else {
    for (const octet of base.split('.')) first = (first << 8n) | BigInt(Number(octet));
  }
  const text = (n: bigint) =>
    v6
      ? Array.from({ length: 8 }, (_, i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(':')
      : Array.from({ length: 4 }, (_, i) => String((n >> BigInt(24 - 8 * i)) & 255n)).join('.');
  return [first, first + size / 2n, first + size - 1n].map(text);
}

describe('outbound rules', () => {
  it('refuses the first, a middle and the last address of every special-purpose range of both families', () => {
    for (const range of [...SPECIAL_V4, ...SPECIAL_V6]) {
      for (const address of firstMiddleLast(range)) {
        assert.equal(isPrivateAddress(address), true, `${address} (${range})`);
        const url = `https://${address.includes(':') ? `[${address}]` : address}/hook`;
        assert.ok(refusedUrl(url, []), url);
      }
    }
  });

  it('judges the IPv6 forms that carry an IPv4 address by that address', () => {
    for (const { range, publicOne, privateOnes } of CARRYING_V6) {
      const [first = '', , last = ''] = firstMiddleLast(range);
      // The range's first and last addresses carry 0.0.0.0 and 255.255.255.255 (Teredo: as server).
      for (const address of [first, last, ...privateOnes]) {
        assert.equal(isPrivateAddress(address), true, `${address} (${range})`);
      }
      assert.equal(isPrivateAddress(publicOne), false, `${publicOne} (${range})`);
    }
  });

  it('refuses IPv6 outside the global unicast block (2000::/3), IPv4-compatible addresses included', () => {
    for (const address of ['::8.8.8.8', '::10.0.0.1', '::2', '4000::1', '8000::1', 'e000::1', 'fe00::1']) {
      assert.equal(isPrivateAddress(address), true, address);
    }
  });

  it('lets public addresses of both families through', () => {
    for (const address of [
      '1.1.1.1',
      '8.8.8.8',
      '93.184.215.14',
      '100.63.255.255',
      '100.128.0.0',
      '172.15.255.255',
      '172.32.0.0',
      '192.0.1.0',
      '198.17.255.255',
      '223.255.255.255',
      '2606:4700::1111',
      '2a00:1450:4001:80b::200e',
      '2001:4860:4860::8888',
      '2001:200::1',
      '3ffe:ffff::1',
    ]) {
      assert.equal(isPrivateAddress(address), false, address);
      const url = `https://${address.includes(':') ? `[${address}]` : address}/hook`;
      assert.equal(refusedUrl(url, []), undefined, url);
    }
    // A name is not an address: its addresses are judged at connect time.
    assert.equal(isPrivateAddress('example.com'), false);
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

describe('the connector of connections to caller-chosen hosts', () => {
  it('refuses an address literal before the socket opens (Node connects to one without a lookup)', async () => {
    const server = createHttpsServer(peerTls(), (_request, response) => response.writeHead(204).end());
    let connections = 0;
    server.on('connection', () => {
      connections += 1;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const publicOnly = new Agent({ connect: createPublicOnlyConnector() });
    const plain = new Agent();
    try {
      for (const url of [`https://127.0.0.1:${port}/`, `https://[::ffff:127.0.0.1]:${port}/`]) {
        const error = await fetch(url, { dispatcher: publicOnly }).then(
          () => undefined,
          (e: unknown) => e,
        );
        assert.ok(refusedAtConnect(error), `${url}: ${String(error)}`);
      }
      assert.equal(connections, 0, 'no connection was made');
      // The same URL without the connector does reach the peer: the refusal is the connector's.
      await fetch(`https://127.0.0.1:${port}/`, { dispatcher: plain }).catch(() => undefined);
      assert.ok(connections > 0);
    } finally {
      await Promise.all([publicOnly.close(), plain.close()]);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
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
