import { Pool } from 'undici';
import { isAllowedHost, refusedUrl } from '../providers/outbound.ts';
import { createPublicOnlyConnector, refusedAtConnect } from '../providers/outbound-connect.ts';
import { contextOf, inSpan, SpanKind, traceparentOf, tracingOn } from '../tracing/tracer.ts';
import { createDeadlines, send } from './send.ts';
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
  /** The callback it is for: its connections carry it (each callback has its own). */
  callbackId: string;
  /** The notification's stored `traceparent`: the POST is a span of its trace and carries its own. */
  traceContext?: string;
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

/** Callbacks whose connections are kept at once (the one used least recently is closed beyond). */
const MAX_TARGETS = 1000;

/**
 * Requests a connection to a receiver carries at once (HTTP/1.1 pipelining): a callback's
 * concurrency is spread over ceil(concurrency / PIPELINING) connections.
 */
const PIPELINING = 8;

/** Where a callback's posts go (its URL checked and parsed once, its own connections), or why they may not. */
type Target = { url: string } & (
  | {
      origin: string;
      path: string;
      dispatcher: Pool;
      /** Connected to through the outbound rules' connector (its host is not listed). */
      publicOnly: boolean;
      /** Pipelined yet; and whether it never will be (its receiver closes connections). */
      pipelined: boolean;
      single: boolean;
      /** Answers, and connections opened, on the current connections (`dispatcher`). */
      answers: number;
      connects: number;
      /** Answers since the receiver last closed a connection after its answer (or since the first). */
      sinceClose: number;
    }
  | { refused: string }
);

/**
 * Answers a callback's receiver gives on kept connections before its requests are pipelined,
 * and that it must give between two closed connections for them to stay pipelined.
 */
const KEPT_ANSWERS = 8;

/**
 * Whether undici closed a connection because the answer said it would not be kept: a
 * `Connection: close`, or an HTTP/1.0 answer without keep-alive, which says nothing and closes.
 */
const closedAfterAnswer = (error: unknown) =>
  (error as { code?: unknown }).code === 'UND_ERR_INFO' && (error as Error).message === 'reset';

/**
 * Sends callback messages as Standard Webhooks says: signed, one POST each, the answer read and
 * dropped. A URL the outbound rules refuse (section 7) is not called; hosts not in `allowedHosts`
 * are connected to only at public addresses (checked on the resolved address, so a name that
 * resolves to a private one is refused at connect, and on an address literal before it opens).
 *
 * Each callback (`callbackId`) has connections of its own, up to `concurrency` requests pipelined
 * PIPELINING to a connection: two callbacks at the same receiver never wait on each other's
 * connections (a pool per origin shared by every tenant would queue one tenant's requests behind
 * another's flood). Pipelining is safe here because a message may arrive twice by the contract
 * (receivers de-duplicate on `webhook-id`), so undici may send again what a closed connection
 * left unanswered. Pipelining is earned by a receiver that keeps its connections (noteAnswer).
 */
export function createPoster(
  allowedHosts: readonly string[],
  timeoutMs = CALLBACK_TIMEOUT_MS,
  concurrency = 32,
) {
  const deadline = createDeadlines(timeoutMs);
  type Reachable = Extract<Target, { dispatcher: Pool }>;
  /**
   * Pipelining is earned: a callback starts with one request a connection, and is pipelined once
   * its receiver has given KEPT_ANSWERS answers on connections it kept (answers beyond the
   * connections opened). A receiver that closes each connection after its answer, with
   * `Connection: close` or as HTTP/1.0 does without a word, never earns it: it would have every
   * request pipelined behind an answer sent again, up to eight times the traffic, each copy
   * handled. A pipelined receiver that closes a connection after an answer again within
   * KEPT_ANSWERS answers goes back to one request a connection for good; one that does so now
   * and then (a web server's requests-per-connection limit) stays pipelined.
   */
  const noteAnswer = (target: Reachable) => {
    target.answers += 1;
    target.sinceClose += 1;
    const kept = target.answers - target.connects;
    if (!target.pipelined && !target.single && kept >= KEPT_ANSWERS) swap(target, true);
  };
  const noteClosedAfterAnswer = (target: Reachable) => {
    if (target.pipelined && target.sinceClose < KEPT_ANSWERS) {
      swap(target, false);
      target.single = true;
    }
    target.sinceClose = 0;
  };
  // A callback's connections: pipelined, or one request each until the receiver has kept them.
  const poolOf = (target: Reachable, pipelined: boolean) => {
    const pool = new Pool(target.origin, {
      connect: target.publicOnly ? createPublicOnlyConnector() : {},
      ...(pipelined
        ? { connections: Math.ceil(concurrency / PIPELINING), pipelining: PIPELINING }
        : { connections: concurrency, pipelining: 1 }),
    });
    target.answers = 0;
    target.connects = 0;
    pool.on('connect', () => {
      if (target.dispatcher === pool) target.connects += 1;
    });
    pool.on('disconnect', (_origin, _targets, error) => {
      if (target.dispatcher === pool && closedAfterAnswer(error)) noteClosedAfterAnswer(target);
    });
    return pool;
  };
  const swap = (target: Reachable, pipelined: boolean) => {
    const old = target.dispatcher;
    target.dispatcher = poolOf(target, pipelined);
    target.pipelined = pipelined;
    // What the old connections carry finishes on them; they close once idle.
    old.close().catch(() => undefined);
  };
  // Each callback's URL checked and parsed once: a burst posts to the same few URLs many
  // thousand times (two URL parses and the address checks were a few µs of each post).
  const targets = new Map<string, Target>();
  const closeOf = (target: Target | undefined) =>
    target && 'dispatcher' in target ? target.dispatcher.close() : Promise.resolve();
  const forget = (callbackId: string) => {
    closeOf(targets.get(callbackId)).catch(() => undefined);
    targets.delete(callbackId);
  };
  const targetOf = (callbackId: string, raw: string): Target => {
    const known = targets.get(callbackId);
    if (known?.url === raw) {
      // Most recently used last, so that the first is the one to close when full.
      targets.delete(callbackId);
      targets.set(callbackId, known);
      return known;
    }
    forget(callbackId);
    let target: Target;
    const refused = refusedUrl(raw, allowedHosts, 'HERALD_CALLBACK_ALLOWED_HOSTS');
    if (refused) target = { url: raw, refused: `callback URL ${refused}` };
    else {
      const url = new URL(raw);
      const reachable = {
        url: raw,
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        publicOnly: !isAllowedHost(url, allowedHosts),
        pipelined: false,
        single: false,
        answers: 0,
        connects: 0,
        sinceClose: 0,
      } as Reachable;
      reachable.dispatcher = poolOf(reachable, false);
      target = reachable;
    }
    if (targets.size >= MAX_TARGETS) forget(targets.keys().next().value as string);
    targets.set(callbackId, target);
    return target;
  };
  return {
    post(request: PostRequest): Promise<PostAnswer> {
      const target = targetOf(request.callbackId, request.url);
      if ('refused' in target)
        return Promise.resolve({ statusCode: null, error: target.refused, refused: true });
      if (request.traceContext === undefined || !tracingOn()) return postTo(target, request, null);
      // A CLIENT span in the notification's trace; the receiver continues it from `traceparent`.
      // Its host, never its URL (a path may hold a token).
      return inSpan(
        'POST',
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'http.request.method': 'POST',
            'server.address': new URL(target.origin).hostname,
            'herald.callback.id': request.callbackId,
          },
        },
        async (span) => {
          const answer = await postTo(target, request, traceparentOf(span));
          if (answer.statusCode !== null) span?.setAttribute('http.response.status_code', answer.statusCode);
          else span?.setAttribute('error.type', 'no answer');
          return answer;
        },
        contextOf(request.traceContext),
      );
    },
    /** Closes a callback's connections (it was deleted or disabled). */
    forget,
    close: async () => {
      const open = [...targets.values()];
      targets.clear();
      await Promise.all(open.map(closeOf));
    },
  };

  /** One POST to a reachable callback URL, with `traceparent` when the attempt is traced. */
  async function postTo(
    target: Reachable,
    request: PostRequest,
    traceparent: string | null,
  ): Promise<PostAnswer> {
    const { origin, path, dispatcher } = target;
    const headers: Record<string, string> = {
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
    };
    if (traceparent !== null) headers.traceparent = traceparent;
    try {
      // A dispatch of the callback's pool (send.ts), not fetch(): a callback is one small
      // POST, and fetch's WHATWG streams cost several times more CPU per request.
      const statusCode = await send(
        dispatcher,
        {
          origin,
          path,
          method: 'POST',
          headers,
          body: request.body,
          // Pipelined (see createPoster): undici holds a POST back until the connection is
          // idle unless it may be sent again, and pipelines nothing behind a blocking one.
          idempotent: true,
          blocking: false,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        },
        deadline(),
      );
      noteAnswer(target);
      // The answer's body was read and dropped: never stored or logged. Redirects are not
      // followed (a 3xx is a failed attempt).
      return { statusCode, error: null };
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
  }
}
