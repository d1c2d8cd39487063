import { setMaxListeners } from 'node:events';
import { Agent } from 'undici';
import { isAllowedHost, publicOnlyLookup, refusedAtConnect, refusedUrl } from '../providers/outbound.ts';
import { signatureHeader } from './signing.ts';

/** No answer within 10 s is a failed attempt, retried like any other. */
export const CALLBACK_TIMEOUT_MS = 10_000;

/** One signed POST of a callback message: everything the request needs, nothing of the store. */
export interface PostRequest {
  url: string;
  /** The `webhook-id`, the same on every attempt. */
  messageId: string;
  /** Seconds since the epoch: the `webhook-timestamp`, signed with the body. */
  timestamp: number;
  /** The secrets that sign it (two for a day after a rotation). */
  secrets: string[];
  body: string;
}

/** The receiver's status code, or why there was none. */
export interface PostAnswer {
  statusCode: number | null;
  error: string | null;
  /** The URL may not be called at all (the outbound rules): no attempt is made, none will be. */
  refused?: true;
}

const timedOut = (error: unknown) =>
  (error as Error).name === 'TimeoutError' ||
  /TIMEOUT/.test(String((error as { code?: unknown }).code ?? ''));

/** Parsed callback URLs kept at most (one per callback; cleared when full). */
const MAX_TARGETS = 1000;

/** Where a callback URL's posts go, or why they may not. */
type Target = { origin: string; path: string; dispatcher: Agent } | { refused: string };

/** Requests that start within this long of each other share one timeout signal. */
const SHARE_DEADLINE_MS = 100;

/**
 * The signal that ends a request with no answer after CALLBACK_TIMEOUT_MS, headers and body in
 * all. One AbortSignal.timeout() a request was about 6 µs of CPU, and 4% of the sender thread's
 * time in a burst (a CPU profile of the callbacks bench), so the requests that start within
 * SHARE_DEADLINE_MS share one; it fires that much later, so each still gets its full time.
 */
export function createDeadlines(
  timeoutMs = CALLBACK_TIMEOUT_MS,
  shareMs = SHARE_DEADLINE_MS,
): () => AbortSignal {
  let current: AbortSignal | undefined;
  let startedAt = Number.NEGATIVE_INFINITY;
  return () => {
    const now = performance.now();
    if (current === undefined || now - startedAt >= shareMs) {
      current = AbortSignal.timeout(timeoutMs + shareMs);
      // Each request in flight listens on it until it ends.
      setMaxListeners(0, current);
      startedAt = now;
    }
    return current;
  };
}

/**
 * Sends callback messages as Standard Webhooks says: signed, one POST each, the answer read and
 * dropped. A URL the outbound rules refuse (section 7) is not called; hosts not in `allowedHosts`
 * are connected to only at public addresses (checked on the resolved address, so a name that
 * resolves to a private one is refused at connect).
 */
export function createPoster(allowedHosts: readonly string[], timeoutMs = CALLBACK_TIMEOUT_MS) {
  const publicOnly = new Agent({ connect: { lookup: publicOnlyLookup } });
  const listed = new Agent();
  const deadline = createDeadlines(timeoutMs);
  // Each callback URL checked and parsed once: a burst posts to the same few URLs many thousand
  // times (two URL parses and the address checks were a few µs of each post).
  const targets = new Map<string, Target>();
  const targetOf = (raw: string): Target => {
    let target = targets.get(raw);
    if (target === undefined) {
      const refused = refusedUrl(raw, allowedHosts, 'HERALD_CALLBACK_ALLOWED_HOSTS');
      if (refused) target = { refused: `callback URL ${refused}` };
      else {
        const url = new URL(raw);
        target = {
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          dispatcher: isAllowedHost(url, allowedHosts) ? listed : publicOnly,
        };
      }
      if (targets.size >= MAX_TARGETS) targets.clear();
      targets.set(raw, target);
    }
    return target;
  };
  return {
    async post(request: PostRequest): Promise<PostAnswer> {
      const target = targetOf(request.url);
      if ('refused' in target) return { statusCode: null, error: target.refused, refused: true };
      const { origin, path, dispatcher } = target;
      try {
        // The dispatcher's own request(), not fetch(): a callback is one small POST, and fetch's
        // WHATWG streams cost several times more CPU per request.
        const response = await dispatcher.request({
          origin,
          path,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'Herald-Callbacks/1',
            'webhook-id': request.messageId,
            'webhook-timestamp': String(request.timestamp),
            'webhook-signature': signatureHeader(
              request.secrets,
              request.messageId,
              request.timestamp,
              request.body,
            ),
          },
          body: request.body,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          signal: deadline(),
        });
        // The answer is read (so the connection is reused) and dropped: never stored or logged.
        // Redirects are not followed (a 3xx is a failed attempt).
        await response.body.dump().catch(() => undefined);
        return { statusCode: response.statusCode, error: null };
      } catch (error) {
        // Herald's own words, never the error's code or text: a closed port, a filtered one and
        // a TLS mismatch would otherwise answer differently (ECONNREFUSED, a timeout, OpenSSL's
        // text), and the deliveries a tenant reads would scan the hosts Herald can reach.
        const detail = refusedAtConnect(error)
          ? 'callback host resolves to a private address'
          : timedOut(error)
            ? `no answer within ${timeoutMs / 1000} s`
            : 'could not reach the callback URL';
        return { statusCode: null, error: detail };
      }
    },
    close: () => Promise.all([publicOnly.close(), listed.close()]).then(() => undefined),
  };
}
