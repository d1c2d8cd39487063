import { isIP } from 'node:net';
import { isLoopbackAddress, isPublicAddress } from './public-address.ts';

/**
 * Where outbound requests to caller-chosen URLs (Web Push endpoints, status callbacks) may go:
 * public unicast addresses only (`public-address.ts` says which), never `localhost`. Checked at
 * acceptance on the URL's host (refusedUrl), again at send, and at connect time
 * (createPublicOnlyConnector): on the addresses a name resolves to (publicOnlyLookup), so a
 * name that resolves elsewhere later (DNS rebinding) does not get through, and on an address
 * literal itself. Hosts listed in HERALD_PUSH_ALLOWED_HOSTS or HERALD_CALLBACK_ALLOWED_HOSTS (a
 * name, or `host:port`) are exempt from all three, for private services and tests.
 *
 * The connect-time half is outbound-connect.ts: it loads undici, which the API's event loop,
 * that only checks URLs here, does not need (about 4 MB of idle RSS).
 */

/** Whether an address literal is one Herald must not call on a caller's behalf; false for a name. */
export function isPrivateAddress(address: string): boolean {
  return isIP(address) !== 0 && !isPublicAddress(address);
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
  return host === 'localhost' || host.endsWith('.localhost') || isLoopbackAddress(host);
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
  if (url.username || url.password) return 'must NOT carry a user name or password';
  if (isAllowedHost(url, allowedHosts)) return undefined;
  const host = bareHost(url);
  if (isLoopbackHost(host) || isPrivateAddress(host)) {
    return `must NOT name a loopback, private, link-local or other non-public address (${variable} lists exceptions)`;
  }
  return undefined;
}
