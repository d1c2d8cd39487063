import { type Static, Type } from '@sinclair/typebox';
import { withExample } from '../http/examples.ts';
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
        description:
          "The public keys that verify Herald's tokens, for a verifier of its own (an `api` process with HERALD_JWKS_URL, or your service). A rotated key stays published until the last token it signed has expired. Cached 5 minutes.",
        response: {
          200: withExample(Type.Object({ keys: Type.Array(PublicJwk) }), {
            keys: [
              {
                kty: 'EC',
                kid: 'k-2026-11-28-a1b2c3',
                alg: 'ES256',
                use: 'sig',
                crv: 'P-256',
                x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
                y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
              },
            ],
          }),
        },
      },
    },
    async (_request, reply) => {
      reply.header('Cache-Control', 'public, max-age=300');
      // Stored public JWKs always carry kid, alg and use (see makeKeyRecord).
      return { keys: (await keyring.jwks()) as Array<Static<typeof PublicJwk>> };
    },
  );
};
