import type { LookupAddress } from 'node:dns';
import { Resolver } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { ipv6Groups } from '../ipv6.ts';
import { hostsFileAddresses } from './hosts-file.ts';

/**
 * Where outbound requests to caller-chosen URLs (Web Push endpoints, status callbacks) may not go: loopback,
 * private, link-local, unique-local and unspecified addresses, the other ranges that are not
 * public (shared, benchmarking, multicast, reserved), IPv6 forms that carry such an IPv4 address
 * (IPv4-mapped and -compatible, NAT64, 6to4), and `localhost`. Checked twice:
 * at acceptance on the URL's host (refusedUrl), and at connect time on the addresses the host
 * resolves to (publicOnlyLookup), so a name that resolves elsewhere later (DNS rebinding) does
 * not get through. Hosts listed in HERALD_PUSH_ALLOWED_HOSTS or HERALD_CALLBACK_ALLOWED_HOSTS (a
 * name, or `host:port`) are exempt from both, for private services and tests.
 */
const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv6');
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * The IPv4 address an IPv6 literal carries where a host or a gateway may reach it: IPv4-mapped
 * (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`, so `::` and `::1` too), NAT64
 * (`64:ff9b::a.b.c.d`) and 6to4 (`2002:AABB:CCDD::`).
 */
function embeddedIpv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && (g[5] === 0xffff || g[5] === 0)) return v4(g[6] ?? 0, g[7] ?? 0);
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return v4(g[6] ?? 0, g[7] ?? 0);
  if (g[0] === 0x2002) return v4(g[1] ?? 0, g[2] ?? 0);
  return undefined;
}

/** Whether an address literal (or the IPv4 address an IPv6 one carries) is in `list`; false for a name. */
function listed(list: BlockList, address: string): boolean {
  const type = isIP(address);
  if (type === 4) return list.check(address, 'ipv4');
  if (type !== 6) return false;
  const v4 = embeddedIpv4(address);
  return (v4 !== undefined && list.check(v4, 'ipv4')) || list.check(address, 'ipv6');
}

/** Whether an address literal is in a range Herald must not call on a caller's behalf. */
export function isPrivateAddress(address: string): boolean {
  return listed(PRIVATE, address);
}

/**
 * A URL's host without IPv6 brackets or a fully qualified name's trailing dot, lower-cased:
 * `localhost.` is `localhost`.
 */
const bareHost = (url: URL) =>
  url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();

/** `localhost`, a `.localhost` name, or a loopback address literal (127.0.0.0/8, ::1). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || listed(LOOPBACK, host);
}

/** Whether the URL's host (or host:port) is listed in HERALD_PUSH_ALLOWED_HOSTS. */
export function isAllowedHost(url: URL, allowedHosts: readonly string[]): boolean {
  const host = bareHost(url);
  const hostPort = `${host}:${url.port || '443'}`;
  return allowedHosts.some((h) => h.toLowerCase() === host || h.toLowerCase() === hostPort);
}

/** Why a caller-chosen URL may not be called, or undefined when it may; `variable` lists exceptions. */
export function refusedUrl(
  raw: string,
  allowedHosts: readonly string[],
  variable = 'HERALD_PUSH_ALLOWED_HOSTS',
): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be a URL';
  }
  if (url.protocol !== 'https:') return 'must be an https:// URL';
  // Never sent (the request goes to the origin), and a password would be shown back and stored.
  if (url.username || url.password) return 'must not carry a user name or password';
  if (isAllowedHost(url, allowedHosts)) return undefined;
  const host = bareHost(url);
  if (isLoopbackHost(host) || isPrivateAddress(host)) {
    return `must not name a loopback, private, link-local or other non-public address (${variable} lists exceptions)`;
  }
  return undefined;
}

/** The code of the error publicOnlyLookup fails a connection with. */
export const PRIVATE_ADDRESS = 'EHERALDPRIVATEADDRESS';

/** How long one DNS query for a caller-chosen host may take, and how often it is tried. */
const DNS_TIMEOUT_MS = 2000;
const DNS_TRIES = 2;
/**
 * The addresses of a caller-chosen host, asked of DNS directly (c-ares, on the event loop), not
 * with the system's lookup. That one runs getaddrinfo in libuv's thread pool, which the whole
 * process shares and which runs at most two lookups at once: a tenant whose push endpoints or
 * callback URLs name hosts with a DNS server that never answers would make every other lookup
 * of the process (other tenants' endpoints, the push services', SMTP's) wait behind theirs, for
 * the system resolver's timeout each (5 s, twice). Here a query that hangs holds up only its own
 * connection. The hosts file is read first, as the system's resolver would.
 */
function addressesWith(resolver: Resolver) {
  return async (hostname: string): Promise<LookupAddress[]> => {
    const literal = isIP(hostname);
    if (literal) return [{ address: hostname, family: literal }];
    const listed = hostsFileAddresses(hostname);
    if (listed.length > 0) return listed;
    const answers = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const found = answers.flatMap((answer, i) =>
      answer.status === 'fulfilled'
        ? answer.value.map((address) => ({ address, family: i === 0 ? 4 : 6 }))
        : [],
    );
    if (found.length > 0) return found;
    // Neither family has an address: the first query's error (ENOTFOUND, ETIMEOUT, …) says why.
    const failed = answers.find((answer) => answer.status === 'rejected');
    throw failed?.reason ?? Object.assign(new Error(`${hostname} has no address`), { code: 'ENODATA' });
  };
}

/**
 * A socket `lookup` that fails the connection when any of the host's addresses is private (a
 * host with one public and one private address is refused too: the socket may pick either).
 * Used by the connections Herald opens to caller-chosen hosts; `resolver` is for tests.
 */
export function createPublicOnlyLookup(
  resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: DNS_TRIES }),
): LookupFunction {
  const addressesOf = addressesWith(resolver);
  return (hostname, options, callback) => {
    addressesOf(hostname).then(
      (all) => {
        const addresses = options.family ? all.filter((a) => a.family === options.family) : all;
        if (addresses.length === 0 || addresses.some((a) => isPrivateAddress(a.address))) {
          const denied = Object.assign(new Error(`${hostname} resolves to a private address`), {
            code: PRIVATE_ADDRESS,
          });
          return callback(denied, '', 0);
        }
        if (options.all)
          return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        const [first] = addresses as [LookupAddress];
        return callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}

/** The lookup of every connection to a caller-chosen host (see createPublicOnlyLookup). */
export const publicOnlyLookup = createPublicOnlyLookup();

/** Whether a failed request was refused by publicOnlyLookup (fetch wraps the socket's error). */
export function refusedAtConnect(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    if ((e as { code?: unknown }).code === PRIVATE_ADDRESS) return true;
  }
  return false;
}
