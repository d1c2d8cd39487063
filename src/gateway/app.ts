import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from '../config/config.ts';
import { routeBodyLimits } from '../http/body-limits.ts';
import { installErrorHandler } from '../http/error-handler.ts';
import { loggerOptions } from '../http/logger.ts';
import { hardenServer, serverLimits } from '../http/server-options.ts';
import { RECIPIENT_BATCH_BODY_LIMIT } from '../recipients/model.ts';
import { createPools, type HopOptions, type Route, registerRoute } from './proxy.ts';
import { registerSecurityHeaders } from './security.ts';
import { DEFAULT_WEB_ROOT, registerStaticUi } from './static.ts';

const SESSION_PATH = /^\/api\/session(?:[/?]|$)/;

/** What the gateway needs besides the config; tests shorten the timeouts or point at another UI build. */
export interface GatewayOptions {
  webRoot?: string;
  hop?: Partial<HopOptions>;
}

/** The gateway's forwarding table (docs/web-ui.md, "The gateway"), most specific first. */
function gatewayRoutes(config: Config): Route[] {
  const { authUrl, apiUrl, bodyLimit, batchBodyLimit } = config;
  return [
    {
      prefix: '/api/session',
      upstream: authUrl,
      target: '/auth/login',
      methods: ['POST'],
      exact: true,
      bodyLimit,
    },
    {
      prefix: '/api/session/refresh',
      upstream: authUrl,
      target: '/auth/refresh',
      methods: ['POST'],
      exact: true,
      bodyLimit,
    },
    { prefix: '/api/auth', upstream: authUrl, target: '/auth', bodyLimit },
    {
      prefix: '/api/notifications/stream',
      upstream: apiUrl,
      target: '/notifications/stream',
      methods: ['GET', 'HEAD'],
      exact: true,
      long: true,
      bodyLimit,
    },
    {
      // The inbox stream, like the status stream: a long answer on a connection of its own.
      // OPTIONS too: a page of another origin (HERALD_INBOX_ORIGINS) sends the stream's CORS
      // preflight here, and the API answers it.
      prefix: '/api/inbox/stream',
      upstream: apiUrl,
      target: '/inbox/stream',
      methods: ['GET', 'HEAD', 'OPTIONS'],
      exact: true,
      long: true,
      bodyLimit,
    },
    {
      prefix: '/api/notifications/batch',
      upstream: apiUrl,
      target: '/notifications/batch',
      bodyLimit: batchBodyLimit,
    },
    {
      prefix: '/api/recipients/batch',
      upstream: apiUrl,
      target: '/recipients/batch',
      bodyLimit: RECIPIENT_BATCH_BODY_LIMIT,
    },
    { prefix: '/api', upstream: apiUrl, target: '', bodyLimit },
  ];
}

/**
 * Builds the gateway (BFF): a stateless proxy hop in front of the auth service and the API that
 * also serves the web UI, with the security headers set here, at the edge. Sets no cookie and
 * keeps nothing between requests, so any number of gateways can run side by side.
 */
export async function buildGateway(config: Config, options: GatewayOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: loggerOptions(config.logLevel, config.logFormat),
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    // The gateway is the edge: the socket's peer is the client, whatever headers say.
    trustProxy: false,
    return503OnClosing: true,
    ...serverLimits(config.requestTimeoutMs),
  });
  hardenServer(app.server, routeBodyLimits(app, config.bodyLimit));
  installErrorHandler(app);
  await registerSecurityHeaders(app);
  // Token answers must never be stored by a browser or a shared cache, including error answers.
  app.addHook('onSend', async (request, reply) => {
    if (SESSION_PATH.test(request.url)) reply.header('cache-control', 'no-store');
  });
  const hop: HopOptions = { timeoutMs: 30_000, connectTimeoutMs: 5_000, maxSockets: 128, ...options.hop };
  const pools = createPools(hop);
  app.addHook('onClose', async () => pools.close());
  for (const route of gatewayRoutes(config)) await registerRoute(app, route, hop, pools);
  await registerStaticUi(app, options.webRoot ?? DEFAULT_WEB_ROOT);
  return app;
}
