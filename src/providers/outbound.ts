import { BlockList, isIP } from 'node:net';

/**
 * Where outbound requests to caller-chosen URLs (Web Push endpoints) may not go: loopback,
 * private, link-local, unique-local and unspecified addresses, and `localhost`. Checked at
 * acceptance on the URL's host; hosts listed in HERALD_PUSH_ALLOWED_HOSTS (a name, or
 * `host:port`) are exempt, for private push services and tests.
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

/** Whether an address literal is in a range Herald must not call on a caller's behalf. */
export function isPrivateAddress(address: string): boolean {
  const type = isIP(address);
  if (type === 4) return PRIVATE.check(address, 'ipv4');
  if (type !== 6) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return PRIVATE.check(mapped[1], 'ipv4');
  return PRIVATE.check(address, 'ipv6');
}

/** Why a caller-chosen URL may not be called, or undefined when it may. */
export function refusedUrl(raw: string, allowedHosts: readonly string[]): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be a URL';
  }
  if (url.protocol !== 'https:') return 'must be an https:// URL';
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const hostPort = `${host}:${url.port || '443'}`;
  if (allowedHosts.some((h) => h.toLowerCase() === host || h.toLowerCase() === hostPort)) return undefined;
  if (host === 'localhost' || host.endsWith('.localhost') || isPrivateAddress(host)) {
    return 'must not name a loopback, private, link-local or unspecified address (HERALD_PUSH_ALLOWED_HOSTS lists exceptions)';
  }
  return undefined;
}
