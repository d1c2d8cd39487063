import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendMethodNotAllowed, sendNoRoute } from '../http/problem.ts';
import { downstreamHeaders, HopError, upstreamError, upstreamRequestHeaders } from './forwarding.ts';
import { climbs } from './paths.ts';

/** One forwarding rule: requests under `prefix` go to `upstream` + `target` + the rest of the path. */
export interface Route {
  prefix: string;
  upstream: string;
  target: string;
  methods?: string[];
  /** Only the prefix itself, not paths below it (the two session routes). */
  exact?: boolean;
  /**
   * Its answers last as long as the client stays (the live status stream): each takes a
   * connection of its own from the upstream's pool for long answers, never one of the request pool's.
   */
  long?: boolean;
  bodyLimit: number;
}

/** Timeouts and limits of the proxy hop. */
export interface HopOptions {
  /** Longest wait for the upstream's answer headers, and between body chunks. */
  timeoutMs: number;
  connectTimeoutMs: number;
  /** Connections kept to one upstream for ordinary requests; more requests wait for one. */
  maxSockets: number;
}

const METHODS = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];
/** Answers up to this size with a Content-Length are read whole, then sent; larger ones stream. */
const SMALL_ANSWER = 64 * 1024;

/** Answers without a body: the upstream's is drained so its connection goes back to the pool. */
const bodiless = (method: string, status: number) => method === 'HEAD' || status === 204 || status === 304;

/**
 * Connection pools, two per upstream origin, shared by the rules that name it: a keep-alive pool
 * of at most `maxSockets` for ordinary requests, and one without a cap or keep-alive for long
 * answers. A stream holds its connection for as long as its client stays, so streams drawn from
 * the request pool would take it over one by one, and every other request through the gateway
 * would queue behind them.
 */
export interface Pools {
  for(url: URL, long?: boolean): HttpAgent;
  /** Ends the kept connections (the gateway's close). */
  close(): void;
}

/** A pool whose new connections give up after `connectTimeoutMs`. */
function pool(
  url: URL,
  connectTimeoutMs: number,
  options: { keepAlive: boolean; maxSockets: number },
): HttpAgent {
  const tls = url.protocol === 'https:';
  const agent = tls ? new HttpsAgent(options) : new HttpAgent(options);
  const connect = agent.createConnection.bind(agent) as (...args: unknown[]) => Socket;
  // Once a connection, not once a request: most requests go out on a kept one.
  agent.createConnection = (...args: unknown[]) => {
    const socket = connect(...args);
    const timer = setTimeout(
      () => socket.destroy(new HopError('HOP_CONNECT_TIMEOUT', 'upstream connect timed out')),
      connectTimeoutMs,
    );
    socket.once(tls ? 'secureConnect' : 'connect', () => clearTimeout(timer));
    socket.once('close', () => clearTimeout(timer));
    return socket;
  };
  return agent;
}

export function createPools(hop: Pick<HopOptions, 'connectTimeoutMs' | 'maxSockets'>): Pools {
  const agents = new Map<string, HttpAgent>();
  return {
    for(url, long = false) {
      const key = `${long ? 'long' : 'requests'} ${url.origin}`;
      let agent = agents.get(key);
      if (!agent) {
        const options = long
          ? { keepAlive: false, maxSockets: Number.POSITIVE_INFINITY }
          : { keepAlive: true, maxSockets: hop.maxSockets };
        agent = pool(url, hop.connectTimeoutMs, options);
        agents.set(key, agent);
      }
      return agent;
    },
    close() {
      for (const agent of agents.values()) agent.destroy();
      agents.clear();
    },
  };
}

/**
 * Sends one request upstream on node:http and passes its answer back: streamed as it comes when
 * it has no length or a large one (an SSE stream, an export), read whole first when small.
 * Nothing is retried: a POST /notifications must not be sent twice by the gateway, and a 503
 * from the API reaches the client as is. A client that goes away ends the upstream request with
 * it: once the answer has begun, Fastify destroys the answer's stream and with it the connection;
 * before, the request is ended here, so it does not hold an upstream connection until the timeout.
 */
function forward(
  request: FastifyRequest,
  reply: FastifyReply,
  base: URL,
  path: string,
  agent: HttpAgent,
  timeoutMs: number,
): void {
  const body = Buffer.isBuffer(request.body) ? request.body : undefined;
  const headers = upstreamRequestHeaders(request, base.host, body?.length);

  const send = base.protocol === 'https:' ? httpsRequest : httpRequest;
  // The path goes as the request target to the upstream's host, never parsed as a URL (so
  // `/api//other-host/x` cannot name another host).
  const upstream = send({
    protocol: base.protocol,
    hostname: base.hostname,
    port: base.port,
    path,
    method: request.method,
    headers,
    agent,
    // No byte from upstream for this long: before the headers, or between body chunks.
    timeout: timeoutMs,
  });
  upstream.once('timeout', () =>
    upstream.destroy(new HopError('HOP_TIMEOUT', 'upstream did not answer in time')),
  );
  let failed = false;
  const fail = (error: Error) => {
    if (failed) return;
    failed = true;
    upstreamError(reply, error);
  };
  upstream.on('error', fail);
  let answered = false;
  // The client left before the answer: end the upstream request, so no answer follows for it.
  reply.raw.once('close', () => {
    if (!answered) upstream.destroy();
  });
  upstream.on('response', (answer: IncomingMessage) => {
    answered = true;
    const status = answer.statusCode ?? 502;
    if (status < 200 || status > 599) {
      answer.destroy();
      fail(new HopError('HOP_BAD_ANSWER', `upstream answered status ${status}`));
      return;
    }
    const passOn = (payload?: Buffer | IncomingMessage) =>
      reply.code(status).headers(downstreamHeaders(answer.headers)).send(payload);
    if (bodiless(request.method, status)) {
      answer.resume();
      passOn();
      return;
    }
    const length = Number(answer.headers['content-length']);
    if (!(length <= SMALL_ANSWER)) {
      passOn(answer);
      return;
    }
    // A small answer of known length (most API answers) is read whole and sent as one buffer:
    // cheaper than a pipe, and one cut short still gets a clean 502.
    const chunks: Buffer[] = [];
    answer.on('data', (chunk: Buffer) => chunks.push(chunk));
    answer.on('end', () => {
      if (!failed) passOn(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    });
    answer.on('error', fail);
    answer.on('close', () => {
      if (!answer.complete) fail(new HopError('HOP_BAD_ANSWER', 'upstream cut its answer short'));
    });
  });
  upstream.end(body);
}

/**
 * Registers one forwarding rule as a real HTTP hop. Bodies are read as raw bytes under the rule's
 * limit and sent on unchanged (never re-encoded), so the upstream validates exactly what the
 * client sent. A path that climbs (`..`, encoded or not) names nothing upstream: 404.
 */
export async function registerRoute(
  app: FastifyInstance,
  route: Route,
  hop: HopOptions,
  pools: Pools,
): Promise<void> {
  const base = new URL(route.upstream);
  const basePath = base.pathname.replace(/\/+$/, '');
  const agent = pools.for(base, route.long);
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // Read whole under the limit: a 413 comes from here, before any byte goes upstream.
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    const handler = (request: FastifyRequest, reply: FastifyReply) => {
      if (climbs(request.url.split('?')[0] ?? '')) return sendNoRoute(request, reply);
      const rest = request.url.slice(route.prefix.length);
      const upstreamPath = `${basePath}${route.target}${rest}`;
      const path = upstreamPath.startsWith('/') ? upstreamPath : `/${upstreamPath}`;
      try {
        forward(request, reply, base, path, agent, hop.timeoutMs);
      } catch (error) {
        // node:http refused to send it (a character it will not put in a request line or header).
        upstreamError(reply, error as Error);
      }
      return reply;
    };
    // The rule's limit is each of its routes' own, so the server's Expect: 100-continue check
    // (http/body-limits.ts) refuses a larger announced body before it is uploaded.
    const options = { method: route.methods ?? METHODS, bodyLimit: route.bodyLimit, handler };
    scope.route({ ...options, url: route.prefix });
    if (!route.exact) scope.route({ ...options, url: `${route.prefix}/*` });
    // A path the gateway takes with some methods only (the session routes) answers the others
    // with 405, as the API does, instead of letting the catch-all pass them upstream as a 404.
    const allowed = route.methods;
    const others = allowed ? METHODS.filter((m) => !allowed.includes(m)) : [];
    if (allowed && others.length > 0) {
      scope.route({
        method: others,
        url: route.prefix,
        handler: (request, reply) => sendMethodNotAllowed(request, reply, allowed),
      });
    }
  });
}
