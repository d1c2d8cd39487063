import { type Static, Type } from '@sinclair/typebox';
import type { RouteModule } from '../http/types.ts';
import { PublicJwk } from './schemas.ts';
import type { AuthDeps } from './service.ts';

/**
 * GET /.well-known/jwks.json (public). Five minutes of caching: a rotation publishes the new key
 * before anything verifies with it elsewhere only if remote verifiers refetch on an unknown
 * kid, which jose's remote key set does.
 */
export const jwksRoute: RouteModule<AuthDeps> = (app, deps) => {
  const { keyring } = deps.auth;
  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        tags: ['auth'],
        summary: 'Public signing keys (JWKS)',
        response: { 200: Type.Object({ keys: Type.Array(PublicJwk) }) },
      },
    },
    async (_request, reply) => {
      reply.header('Cache-Control', 'public, max-age=300');
      // Stored public JWKs always carry kid, alg and use (see makeKeyRecord).
      return { keys: (await keyring.jwks()) as Array<Static<typeof PublicJwk>> };
    },
  );
};
