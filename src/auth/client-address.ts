import { BlockList, isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { parseCidr } from '../config/cidr.ts';
import { ipv6Groups } from '../ipv6.ts';

/** Decides which peer addresses are trusted proxies (HERALD_TRUSTED_PROXIES: addresses or CIDR ranges). */
export function trustedProxies(entries: readonly string[]): (address: string) => boolean {
  const list = new BlockList();
  for (const entry of entries) {
    // Config already refused a malformed entry; this is a programmer error.
    const cidr = parseCidr(entry);
    if (!cidr) throw new TypeError(`HERALD_TRUSTED_PROXIES: "${entry}" is not an address or CIDR`);
    if (cidr.bits === undefined) list.addAddress(cidr.address, cidr.family);
    else list.addSubnet(cidr.address, cidr.bits, cidr.family);
  }
  return (raw) => {
    const address = unmap(raw);
    const type = isIP(address);
    return type !== 0 && list.check(address, type === 6 ? 'ipv6' : 'ipv4');
  };
}

// An IPv4 client on a dual-stack socket shows as ::ffff:1.2.3.4.
function unmap(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/**
 * The client address for login throttling. `X-Forwarded-For` is believed only when the peer is
 * a trusted proxy, and then only up to the right-most entry that is not itself a trusted proxy:
 * everything left of it was written by the client and may be forged.
 */
export function clientAddress(request: FastifyRequest, isTrusted: (address: string) => boolean): string {
  const peer = unmap(request.socket.remoteAddress ?? request.ip);
  if (!isTrusted(peer)) return peer;
  const header = request.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((hop) => unmap(hop.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i] as string;
    if (!isTrusted(hop)) return hop;
  }
  return hops[0] ?? peer;
}

/**
 * The key an address is throttled by: an IPv4 address as it is, an IPv6 one as its /64, the
 * block one subscriber usually holds whole (so a client cannot step through 2^64 addresses).
 */
export function throttleKey(address: string): string {
  const plain = address.split('%')[0] as string;
  if (isIP(plain) !== 6) return address;
  return `${ipv6Groups(plain)
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}
