import type { LookupAddress } from 'node:dns';
import { Resolver } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import { hostsFileAddresses } from './hosts-file.ts';
import { isPrivateAddress } from './outbound.ts';

/**
 * The outbound rules (outbound.ts) at connect time: the connections Herald opens to
 * caller-chosen hosts go to public addresses only, checked on the addresses a name resolves to
 * and on an address literal itself. Apart from outbound.ts so that what only checks a URL (the
 * API's acceptance of push endpoints and callback URLs) does not load undici.
 */

/** The code of the error a connection the outbound rules refuse fails with (lookup or connector). */
export const PRIVATE_ADDRESS = 'EHERALDPRIVATEADDRESS';

/** The error a connection refused by the outbound rules fails with (see refusedAtConnect). */
const refusal = (message: string) => Object.assign(new Error(message), { code: PRIVATE_ADDRESS });

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
          return callback(refusal(`${hostname} resolves to a private address`), '', 0);
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
const publicOnlyLookup = createPublicOnlyLookup();

/**
 * The undici connector of connections to caller-chosen hosts. A name resolves through
 * publicOnlyLookup; an address literal, which Node connects to without any lookup, is checked
 * here before the socket opens, so a private literal that reaches a connection by any path (a
 * row stored before a rule changed, a code path that skipped refusedUrl) is refused all the same.
 */
export function createPublicOnlyConnector(): buildConnector.connector {
  const connect = buildConnector({ lookup: publicOnlyLookup });
  return (options, callback) => {
    if (isPrivateAddress(options.hostname))
      return callback(refusal(`${options.hostname} is a private address`), null);
    return connect(options, callback);
  };
}

/** Whether a failed request was refused by the outbound rules at connect (fetch wraps the error). */
export function refusedAtConnect(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    if ((e as { code?: unknown }).code === PRIVATE_ADDRESS) return true;
  }
  return false;
}
