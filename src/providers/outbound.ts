import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Where outbound requests to caller-chosen URLs (Web Push endpoints, status callbacks) may not go: loopback,
 * private, link-local, unique-local and unspecified addresses, and `localhost`. Checked twice:
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
  ['192.168.0.0', 16],
] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv6');
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Whether an address literal (IPv4-mapped IPv6 included) is in `list`; false for a name. */
function listed(list: BlockList, address: string): boolean {
  const type = isIP(address);
  if (type === 4) return list.check(address, 'ipv4');
  if (type !== 6) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return list.check(mapped[1], 'ipv4');
  return list.check(address, 'ipv6');
}

/** Whether an address literal is in a range Herald must not call on a caller's behalf. */
export function isPrivateAddress(address: string): boolean {
  return listed(PRIVATE, address);
}

/** A URL's host without IPv6 brackets, lower-cased. */
const bareHost = (url: URL) => url.hostname.replace(/^\[|\]$/g, '').toLowerCase();

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
  if (isAllowedHost(url, allowedHosts)) return undefined;
  const host = bareHost(url);
  if (isLoopbackHost(host) || isPrivateAddress(host)) {
    return `must not name a loopback, private, link-local or unspecified address (${variable} lists exceptions)`;
  }
  return undefined;
}

/** The code of the error publicOnlyLookup fails a connection with. */
export const PRIVATE_ADDRESS = 'EHERALDPRIVATEADDRESS';

/**
 * A socket `lookup` that resolves like the default one and fails the connection when any of the
 * host's addresses is private (a host with one public and one private address is refused too:
 * the socket may pick either). Used by the connections Herald opens to caller-chosen hosts.
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const refused = addresses.find((a) => isPrivateAddress(a.address));
    if (refused || addresses.length === 0) {
      const denied = Object.assign(new Error(`${hostname} resolves to a private address`), {
        code: PRIVATE_ADDRESS,
      });
      return callback(denied, '', 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const [first] = addresses as [LookupAddress];
    return callback(null, first.address, first.family);
  });
};

/** Whether a failed request was refused by publicOnlyLookup (fetch wraps the socket's error). */
export function refusedAtConnect(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    if ((e as { code?: unknown }).code === PRIVATE_ADDRESS) return true;
  }
  return false;
}
