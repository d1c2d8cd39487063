import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { HeraldError } from '../errors.ts';
import { VERSION } from '../version.ts';
import { routeBodyLimits } from './body-limits.ts';
import { installErrorHandler } from './error-handler.ts';
import { lazySerializers, lazyValidators } from './lazy-compilers.ts';
import { type LogFormat, loggerOptions } from './logger.ts';
import { refuseBodyWhereNoneIsTaken } from './no-body.ts';
import { refuseNul } from './nul.ts';
import { openapiOptions } from './openapi.ts';
import { hardenServer, serverLimits } from './server-options.ts';
import { installTraceHooks } from './trace-hooks.ts';
import type { App, Routes } from './types.ts';

/** What the API/auth app is built from: its route modules (dependencies bound) and how to protect them. */
export interface AppSpec {
  logLevel: string;
  /** HERALD_LOG_FORMAT as resolved (JSON when absent). */
  logFormat?: LogFormat;
  /** HERALD_PUBLIC_URL: the document's server. */
  publicUrl?: string;
  bodyLimit: number;
  /** HERALD_REQUEST_TIMEOUT_MS: headers and body must arrive within it. */
  requestTimeoutMs: number;
  /** Route modules outside the bearer-token hook. */
  public: Routes[];
  /** Route modules behind it. */
  protected: Routes[];
  /** Installs the one authentication hook on the protected scope (auth/bearer.ts). */
  protect(scope: App): void;
  /** Runs when the app closes (the composition root drains ingest here). */
  onClose?(): Promise<void>;
}

/**
 * A body sent compressed (`Content-Encoding: gzip`) is not decoded: it is refused with `415`
 * (RFC 9110 section 8.4.1), rather than read as the JSON it is not. After authentication
 * (preParsing runs after every onRequest hook), so a request without a token still gets 401.
 */
async function refuseEncodedBody(request: FastifyRequest): Promise<void> {
  const encoding = request.headers['content-encoding'];
  if (encoding === undefined || /^\s*(identity)?\s*$/i.test(encoding)) return;
  throw new HeraldError(
    'UNSUPPORTED_MEDIA_TYPE',
    'Send the body uncompressed: Content-Encoding is not supported.',
  );
}

/** Builds the API/auth app (not listening): the composition root (main.ts) listens. */
export async function buildApp(spec: AppSpec, options: FastifyServerOptions = {}): Promise<App> {
  const app = Fastify({
    logger: loggerOptions(spec.logLevel, spec.logFormat),
    bodyLimit: spec.bodyLimit,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    trustProxy: false,
    return503OnClosing: true,
    ...serverLimits(spec.requestTimeoutMs),
    schemaController: {
      compilersFactory: { buildValidator: lazyValidators(), buildSerializer: lazySerializers() },
    },
    ajv: {
      customOptions: {
        removeAdditional: false,
        coerceTypes: 'array',
        useDefaults: true,
        // The first error; a refused value small enough is checked again for every error
        // (lazy-compilers.ts), since listing all of a large hostile body costs per error.
        allErrors: false,
        validateSchema: false,
      },
    },
    ...options,
  }).withTypeProvider<TypeBoxTypeProvider>();
  hardenServer(app.server, routeBodyLimits(app, spec.bodyLimit));
  installTraceHooks(app);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff');
    // The OpenAPI UI holds no data, but must not be framed (clickjacking).
    if (request.url.startsWith('/docs')) reply.header('content-security-policy', "frame-ancestors 'none'");
    // The docs page at `/docs` names its assets `/docs/static/…` from the root, which a proxy that
    // serves the API under a prefix (the gateway's `/api/docs`) cannot reach; at `/docs/` it names
    // them `./static/…`. A relative Location keeps whatever prefix the browser used.
    const [path, query] = request.url.split('?', 2);
    if (path === '/docs') return reply.redirect(query === undefined ? 'docs/' : `docs/?${query}`, 302);
  });
  app.addHook('preParsing', refuseEncodedBody);
  app.addHook('preValidation', refuseNul);
  installErrorHandler(app);
  // JSON only: a text/plain body is a wrong content type (415), not a string to validate.
  app.removeContentTypeParser('text/plain');
  await app.register(swagger, openapiOptions(spec.publicUrl, VERSION));
  await app.register(swaggerUi, { routePrefix: '/docs' });
  for (const routes of spec.public) await routes(app);
  await app.register(async (scope) => {
    spec.protect(scope as App);
    scope.addHook('onRoute', (route) => {
      const scopes = route.config?.scope ? [route.config.scope] : [];
      route.schema = { ...route.schema, security: [{ bearer: [] }, { clientCredentials: scopes }] };
      refuseBodyWhereNoneIsTaken(route);
    });
    for (const routes of spec.protected) await routes(scope as App);
  });
  if (spec.onClose) app.addHook('onClose', spec.onClose);
  return app;
}
