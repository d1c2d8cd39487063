import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ipv6Groups } from '../ipv6.ts';

/**
 * Whether an address literal is one Herald may call on a caller's behalf: a public unicast
 * address. The ranges come from ipaddr.js (`range()`), which names those of IANA's
 * special-purpose registries of both families (loopback, private, shared, link-local, unique-local,
 * site-local, documentation, benchmarking, AS112, AMT, ORCHID, segment routing, multicast,
 * reserved, broadcast, …): any name other than `unicast` is refused, so a range a later version
 * names is refused too. test/providers/outbound.test.ts holds the registries' entries, so a
 * version that stopped naming one would fail there.
 *
 * Two rules the library's names do not give:
 * - the IPv6 forms that carry an IPv4 address a host or a gateway delivers to (CARRIERS) are
 *   judged by that address: `::ffff:8.8.8.8` may be called, `::ffff:10.0.0.1` may not;
 * - an IPv6 address outside 2000::/3 is refused whatever its name: IANA allocates global unicast
 *   from that block alone (the rest is reserved or special), and the library calls some of it
 *   `unicast`, such as the deprecated IPv4-compatible `::a.b.c.d` and `4000::/3`.
 */
export function isPublicAddress(address: string): boolean {
  const parsed = parseLiteral(address);
  if (parsed === undefined) return false;
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  const carrier = CARRIERS.find(({ range }) => v6.match(range));
  if (carrier) return carrier.carried(v6.parts).every((v4) => v4.range() === 'unicast');
  return v6.match(GLOBAL_UNICAST) && v6.range() === 'unicast';
}

/** Whether an address literal is a loopback one: 127.0.0.0/8, ::1, or 127.0.0.0/8 IPv4-mapped. */
export function isLoopbackAddress(address: string): boolean {
  const parsed = parseLiteral(address);
  if (parsed?.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    return (parsed as ipaddr.IPv6).toIPv4Address().range() === 'loopback';
  return parsed?.range() === 'loopback';
}

/**
 * An address literal as the socket will read it (undefined for a name). Not the library's own
 * parser for IPv6: it reads `::a.b.c.d` as `::ffff:a.b.c.d`, where the socket connects to the
 * IPv4-compatible `::a.b.c.d`, and the rule must judge what the socket connects to.
 */
function parseLiteral(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const family = isIP(address);
  if (family === 4) return ipaddr.IPv4.parse(address); // dotted decimal: node:net takes no other form
  if (family === 6) return new ipaddr.IPv6(ipv6Groups(address));
  return undefined;
}

const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255]);
const part = (parts: number[], i: number) => parts[i] ?? 0;
const lastTwo = (parts: number[]) => [v4(part(parts, 6), part(parts, 7))];

/**
 * The IPv6 forms that carry an IPv4 address which is where the packets end up, and where it sits.
 * The local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215) is not here: where its IPv4 address sits
 * depends on the network's prefix length, so it is refused as a whole (the library names it).
 */
const CARRIERS: { range: [ipaddr.IPv6, number]; carried: (parts: number[]) => ipaddr.IPv4[] }[] = [
  // IPv4-mapped (RFC 4291): the socket connects over IPv4 to the address itself.
  { range: ipaddr.IPv6.parseCIDR('::ffff:0:0/96'), carried: lastTwo },
  // IPv4-translated (RFC 6145 / 7915 SIIT): a translator forwards to the address.
  { range: ipaddr.IPv6.parseCIDR('::ffff:0:0:0/96'), carried: lastTwo },
  // NAT64 well-known prefix (RFC 6052): the network's NAT64 gateway connects to the address.
  { range: ipaddr.IPv6.parseCIDR('64:ff9b::/96'), carried: lastTwo },
  // 6to4 (RFC 3056): 2002:AABB:CCDD::/48 is the site behind the IPv4 address AA.BB.CC.DD.
  { range: ipaddr.IPv6.parseCIDR('2002::/16'), carried: (p) => [v4(part(p, 1), part(p, 2))] },
  // Teredo (RFC 4380): the server's IPv4 address, then the client's, whose bits are inverted.
  {
    range: ipaddr.IPv6.parseCIDR('2001::/32'),
    carried: (p) => [v4(part(p, 2), part(p, 3)), v4(part(p, 6) ^ 0xffff, part(p, 7) ^ 0xffff)],
  },
];

/** IANA's global unicast block (IPv6 Address Space registry): nothing outside it is public. */
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
