import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyServerOptions } from 'fastify';
import { protect } from './authenticate.ts';
import { installErrorHandler } from './error-handler.ts';
import { loggerOptions } from './logger.ts';
import type { App, AppDeps, RouteModule } from './types.ts';

/** Which modules the API port serves, split by whether they sit behind the bearer-token hook. */
export interface ApiModules {
  public: RouteModule[];
  protected: RouteModule[];
}

/** Builds the API/auth app from its config and modules; only main.ts listens. */
export async function buildApp(
  deps: AppDeps,
  modules: ApiModules,
  options: FastifyServerOptions = {},
): Promise<App> {
  const app = Fastify({
    logger: loggerOptions(deps.config.logLevel),
    bodyLimit: deps.config.bodyLimit,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    trustProxy: false,
    return503OnClosing: true,
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false },
    },
    ...options,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  installErrorHandler(app);
  // JSON only: a text/plain body is a wrong content type (415), not a string to validate.
  app.removeContentTypeParser('text/plain');
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Herald',
        version: '0.1.0',
        description: 'Notification delivery with stateless JWT auth.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  for (const module of modules.public) await module(app, deps);
  await app.register(async (scope) => {
    protect(scope, deps.verifier);
    scope.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, security: [{ bearer: [] }] };
    });
    for (const module of modules.protected) await module(scope as App, deps);
  });
  app.addHook('onClose', async () => {
    for (const close of deps.onClose ?? []) await close();
  });
  return app;
}
